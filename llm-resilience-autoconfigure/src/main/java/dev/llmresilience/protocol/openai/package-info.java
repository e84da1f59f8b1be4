/**
 * The OpenAI chat-completions client ({@code protocol: openai}, and {@code azure-openai}: the same
 * format at an Azure deployment's URL, with its api-version, {@code api-key} header and content
 * filter): its wire records, its server-sent events and its errors. For the client factories'
 * users; all else here is package-private.
 */
@NullMarked
package dev.llmresilience.protocol.openai;

import org.jspecify.annotations.NullMarked;
