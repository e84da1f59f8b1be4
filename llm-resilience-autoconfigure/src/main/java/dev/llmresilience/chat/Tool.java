package dev.llmresilience.chat;

import java.io.Serializable;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A function the model may call.
 *
 * @param name the function's name, as the model will call it
 * @param description what it does, for the model to decide when to call it, or {@code null}
 * @param parameters the JSON Schema of its arguments, as JSON text, or {@code null} for none
 * @param strict whether the model must follow the schema exactly (OpenAI structured outputs), or
 * {@code null} for the provider's default
 */
public record Tool(String name, @Nullable String description, @Nullable String parameters, @Nullable Boolean strict)
		implements Serializable {

	public Tool {
		Objects.requireNonNull(name, "name must not be null");
		if (name.isBlank()) {
			throw new IllegalArgumentException("A tool needs a name");
		}
	}

	/**
	 * A function tool.
	 * @param name the function's name
	 * @param description what it does
	 * @param parameters the JSON Schema of its arguments, as JSON text
	 * @return the tool
	 */
	public static Tool function(String name, @Nullable String description, @Nullable String parameters) {
		return new Tool(name, description, parameters, null);
	}

}
