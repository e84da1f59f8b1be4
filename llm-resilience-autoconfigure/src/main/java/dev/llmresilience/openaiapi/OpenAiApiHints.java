package dev.llmresilience.openaiapi;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The reflection a native image needs for the bodies the OpenAI-compatible API writes with
 * Jackson, for chat completions and the Responses API (requests are read as trees). Listed in {@code META-INF/spring/aot.factories}.
 */
final class OpenAiApiHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();
		bindings.registerReflectionHints(hints.reflection(), OpenAiApiBodies.class.getDeclaredClasses());
		bindings.registerReflectionHints(hints.reflection(), ResponsesBodies.class.getDeclaredClasses());
	}

}
