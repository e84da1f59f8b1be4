/**
 * The OpenAI-compatible HTTP API ({@code llm.openai-api}): chat completions and the Responses API
 * served through the gateway, for WebFlux and Servlet applications alike, and their serving codecs
 * (what a client sends, read strictly; what it gets back, written as the official SDKs read it).
 */
@NullMarked
package dev.llmresilience.openaiapi;

import org.jspecify.annotations.NullMarked;
