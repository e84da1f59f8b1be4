/**
 * The protocol SPI ({@code LlmClient}, {@code LlmClientFactory}, {@code ClientSettings}), the HTTP
 * plumbing every protocol shares, and the wire half of docs/failure-rules.md ({@code UpstreamFailures}:
 * what a status, a transport error or a stream's end stands for). For protocol writers; the
 * protocols themselves (OpenAI, Anthropic, Spring AI) live in packages above this one.
 */
@NullMarked
package dev.llmresilience.protocol;

import org.jspecify.annotations.NullMarked;
