/**
 * Azure OpenAI's deployment API ({@code protocol: azure-openai}): the OpenAI chat-completions format
 * at a deployment's URL, with Azure's api-version, {@code api-key} header and content filter.
 */
@NullMarked
package dev.llmresilience.protocol.azure;

import org.jspecify.annotations.NullMarked;
