/**
 * Spring AI both ways: the gateway as a Spring AI {@code ChatModel} ({@code llmGatewayChatModel}),
 * so that Spring AI's {@code ChatClient} gets the breakers and the fallback; and a Spring AI
 * {@code ChatModel} bean as an endpoint ({@code protocol: spring-ai}). With its auto-configuration,
 * loaded only when Spring AI is present. For Spring AI users; only the auto-configuration is public.
 */
@NullMarked
package dev.llmresilience.springai;

import org.jspecify.annotations.NullMarked;
