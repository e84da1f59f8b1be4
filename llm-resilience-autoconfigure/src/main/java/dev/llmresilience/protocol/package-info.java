/**
 * The protocol SPI ({@code LlmClient}, {@code LlmClientFactory}, {@code ClientSettings}), the HTTP
 * plumbing every protocol shares, the wire half of docs/failure-rules.md ({@code UpstreamFailures}:
 * what a status, a transport error or a stream's end stands for), and the OpenAI-compatible wire
 * format and client. Anthropic's, Azure's and Spring AI's protocols live in sub-packages above this
 * one.
 */
@NullMarked
package dev.llmresilience.protocol;

import org.jspecify.annotations.NullMarked;
