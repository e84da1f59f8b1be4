/**
 * The protocol SPI ({@code LlmClient}, {@code LlmClientFactory}, {@code ClientSettings}), the HTTP
 * plumbing every protocol shares, and the OpenAI-compatible wire format and client. Anthropic's and
 * Azure's protocols live in sub-packages above this one.
 */
@NullMarked
package dev.llmresilience.protocol;

import org.jspecify.annotations.NullMarked;
