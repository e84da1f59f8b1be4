/**
 * The OpenAI-compatible HTTP API ({@code llm.openai-api}): chat completions served through the
 * gateway, for WebFlux and Servlet applications alike.
 */
@NullMarked
package dev.llmresilience.openaiapi;

import org.jspecify.annotations.NullMarked;
