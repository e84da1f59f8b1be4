/**
 * The sample application: a chat API in front of {@code LlmGateway}, and a simulated provider
 * whose failure mode can be switched at run time.
 */
@NullMarked
package dev.llmresilience.sample;

import org.jspecify.annotations.NullMarked;
