package dev.llmresilience.protocol.openai;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The reflection a native image needs for the chat-completions and Responses API wire records
 * that Jackson writes and reads, each with its nested records (some are reached only through an {@code Object}
 * component, which the binding registrar cannot follow). Listed in {@code META-INF/spring/aot.factories}.
 */
final class OpenAiWireHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();
		for (Class<?> wire : List.of(OpenAiChatRequest.class, OpenAiChatCompletion.class, OpenAiChatChunk.class,
				OpenAiResponsesWire.class)) {
			bindings.registerReflectionHints(hints.reflection(), wire);
			bindings.registerReflectionHints(hints.reflection(), wire.getDeclaredClasses());
		}
	}

}
