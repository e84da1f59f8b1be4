package dev.llmresilience.openaiapi;

import dev.llmresilience.chat.ChatRequest;

/**
 * A chat-completions request that a client sent to the OpenAI-compatible API, read.
 *
 * @param request the request; its {@code route} is the body's {@code model}, or {@code null} when absent
 * @param stream whether the client asked for a stream
 * @param includeUsage whether a stream ends with a usage chunk ({@code stream_options.include_usage})
 */
record OpenAiApiRequest(ChatRequest request, boolean stream, boolean includeUsage) {
}
