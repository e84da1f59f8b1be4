/**
 * The OpenAI chat-completions client ({@code protocol: openai}, and {@code azure-openai}: the same
 * format at an Azure deployment's URL, with its api-version, {@code api-key} header and content
 * filter), and the Responses API client ({@code protocol: openai-responses}): their wire records,
 * their server-sent events and their errors. For the client factories' users; all else here is
 * package-private.
 */
@NullMarked
package dev.llmresilience.protocol.openai;

import org.jspecify.annotations.NullMarked;
