package dev.llmresilience.chat;

import java.io.Serializable;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Whether and which tool the model must call.
 *
 * @param mode {@link Mode#AUTO}: the model decides; {@link Mode#NONE}: no tool; {@link Mode#REQUIRED}:
 * at least one tool; {@link Mode#FUNCTION}: the function named by {@code function}
 * @param function the function's name for {@link Mode#FUNCTION}, else {@code null}
 */
public record ToolChoice(Mode mode, @Nullable String function) implements Serializable {

	public ToolChoice {
		Objects.requireNonNull(mode, "mode must not be null");
		if ((mode == Mode.FUNCTION) != (function != null)) {
			throw new IllegalArgumentException("A ToolChoice names a function exactly when its mode is FUNCTION");
		}
	}

	/**
	 * The model decides.
	 * @return the choice
	 */
	public static ToolChoice auto() {
		return new ToolChoice(Mode.AUTO, null);
	}

	/**
	 * The model calls no tool.
	 * @return the choice
	 */
	public static ToolChoice none() {
		return new ToolChoice(Mode.NONE, null);
	}

	/**
	 * The model calls at least one tool.
	 * @return the choice
	 */
	public static ToolChoice required() {
		return new ToolChoice(Mode.REQUIRED, null);
	}

	/**
	 * The model calls this function.
	 * @param name the function's name
	 * @return the choice
	 */
	public static ToolChoice function(String name) {
		return new ToolChoice(Mode.FUNCTION, name);
	}

	/** How the model chooses. */
	public enum Mode {

		/** The model decides whether to call tools. */
		AUTO,

		/** The model calls no tool. */
		NONE,

		/** The model calls one or more tools. */
		REQUIRED,

		/** The model calls the named function. */
		FUNCTION

	}

}
