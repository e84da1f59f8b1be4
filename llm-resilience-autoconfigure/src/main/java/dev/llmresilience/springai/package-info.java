/**
 * The gateway as a Spring AI {@code ChatModel} ({@code llmGatewayChatModel}), so that Spring AI's
 * {@code ChatClient} gets the breakers and the fallback. Loaded only when Spring AI is present.
 */
@NullMarked
package dev.llmresilience.springai;

import org.jspecify.annotations.NullMarked;
