package dev.llmresilience.engine;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolChoice;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The reflection a native image needs for the types Jackson writes around the engine: the public
 * chat types (a fallback-cache key is written from a request's messages, tools and tool choice,
 * and applications answer with responses, chunks and deferred results as JSON; a message's parts
 * are reached only through their sealed interface), and the hedge delays of
 * {@code /actuator/llmbreakers}, which sit in a map of maps that the operation's own hints do not
 * follow. Listed in {@code META-INF/spring/aot.factories}.
 */
final class EngineHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();
		bindings.registerReflectionHints(hints.reflection(), ChatRequest.class, ChatMessage.class, Tool.class,
				ToolChoice.class, ChatResponse.class, ChatChunk.class, DeferredResult.class, HedgePolicy.SizeDelay.class);
		bindings.registerReflectionHints(hints.reflection(), ContentPart.class.getPermittedSubclasses());
	}

}
