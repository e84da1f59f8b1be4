package dev.llmresilience.protocol.anthropic;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The reflection a native image needs for the Messages API's wire records that Jackson writes and
 * reads, each with its nested records (a message's content blocks are reached only through an
 * {@code Object} component). Listed in {@code META-INF/spring/aot.factories}.
 */
final class AnthropicWireHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();
		for (Class<?> wire : List.of(AnthropicRequest.class, AnthropicMessage.class, AnthropicEvent.class)) {
			bindings.registerReflectionHints(hints.reflection(), wire);
			bindings.registerReflectionHints(hints.reflection(), wire.getDeclaredClasses());
		}
	}

}
