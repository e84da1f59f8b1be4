package dev.llmresilience.autoconfigure;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/**
 * Thrown at start-up when the {@code llm.*} configuration cannot work. Names the property, what is
 * wrong with it, and what to do; {@link LlmConfigurationFailureAnalyzer} turns it into Boot's
 * failure report. Never contains an API key or a header value. Its static checks are the start-up
 * checks of {@code llm.*} values, each in one wording ("is PT0S, but must be positive", then what to
 * do), so that the same fault reads the same wherever the wiring makes it.
 */
public class LlmConfigurationException extends RuntimeException {

	private final String property;

	private final String problem;

	private final String action;

	/**
	 * Create an instance.
	 * @param property the property at fault, e.g. {@code llm.endpoints.gpt-4o.base-url}
	 * @param problem what is wrong with it
	 * @param action what to do about it
	 */
	public LlmConfigurationException(String property, String problem, String action) {
		super(property + ": " + problem + ". " + action);
		this.property = property;
		this.problem = problem;
		this.action = action;
	}

	/**
	 * The property at fault.
	 * @return the property's name
	 */
	public String getProperty() {
		return this.property;
	}

	/**
	 * What is wrong.
	 * @return the problem
	 */
	public String getProblem() {
		return this.problem;
	}

	/**
	 * What to do.
	 * @return the action
	 */
	public String getAction() {
		return this.action;
	}

	private static final Duration ONE_MILLISECOND = Duration.ofMillis(1);

	private static final long SMALLEST_SIZE = 1024;


	/**
	 * A duration above zero.
	 * @param action what to do, e.g. "Use a positive duration such as 30s."
	 */
	public static Duration positive(String property, @Nullable Duration value, String action) {
		check(value != null && !value.isNegative() && !value.isZero(), property, value, "but must be positive", action);
		return value;
	}

	/**
	 * A duration of at least 1ms: Netty reads a connect timeout of 0ms as none, and Resilience4j
	 * refuses an open state under 1ms.
	 */
	public static Duration atLeastOneMillisecond(String property, @Nullable Duration value, String examples) {
		positive(property, value, "Use a positive duration such as " + examples + ".");
		check(value.compareTo(ONE_MILLISECOND) >= 0, property, value, "but must be at least 1ms",
				"Use a duration of 1ms or more, such as " + examples + ".");
		return value;
	}

	/** A duration of zero or more. */
	public static Duration notNegative(String property, @Nullable Duration value, String action) {
		check(value != null && !value.isNegative(), property, value, "but must not be negative", action);
		return value;
	}

	/** A number of zero or more, where 0 switches something off. */
	public static <N extends Number & Comparable<N>> N notNegative(String property, @Nullable N value, N zero, String action) {
		check(value != null && value.compareTo(zero) >= 0, property, value, "negative", action);
		return value;
	}

	/** A number of at least {@code minimum}. */
	public static <N extends Number & Comparable<N>> N atLeast(String property, N value, N minimum, String action) {
		check(value.compareTo(minimum) >= 0, property, value, "but must be at least " + minimum, action);
		return value;
	}

	/**
	 * Any other rule: fails unless {@code valid}, as "{@code <property>}: is {@code <value>},
	 * {@code <problem>}. {@code <action>}".
	 * @param problem what is wrong with the value, e.g. "outside [0, 1)"
	 */
	public static void check(boolean valid, String property, @Nullable Object value, String problem, String action) {
		if (!valid) {
			throw new LlmConfigurationException(property, "is " + value + ", " + problem, action);
		}
	}

	/**
	 * A secret (an API key) that is not a placeholder left unresolved. Boot keeps
	 * {@code ${OPENAI_API_KEY}} as written when nothing sets {@code OPENAI_API_KEY}, and the provider
	 * would be sent that text as the key. The message names the placeholder's variable, never the
	 * value around it.
	 * @param property the property, e.g. {@code llm.endpoints.gpt-4o.api-key}
	 * @param value its value, or {@code null} when not set
	 * @return the value
	 */
	public static @Nullable String resolved(String property, @Nullable String value) {
		Matcher placeholder = (value != null) ? PLACEHOLDER.matcher(value) : null;
		if (placeholder != null && placeholder.find()) {
			String variable = placeholder.group(1).trim();
			throw new LlmConfigurationException(property,
					"is the placeholder ${" + variable + "}, which nothing resolved: no environment variable or property "
							+ variable + " is set",
					"Set " + variable + " where the application starts (e.g. export " + variable + "=<your key>), or write ${"
							+ variable + ":} to start without a key (the endpoint then gets a WARN at start-up).");
		}
		return value;
	}

	/** {@code ${NAME}} or {@code ${NAME:default}} as Boot leaves it when it cannot resolve it. */
	private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}:]*)[^}]*}");

	/** A size from 1KB to 2GB, the most one buffer can hold. */
	public static long size(String property, @Nullable DataSize value, String action) {
		long bytes = (value != null) ? value.toBytes() : -1;
		check(bytes >= SMALLEST_SIZE && bytes <= Integer.MAX_VALUE, property, value, "outside 1KB to 2GB", action);
		return bytes;
	}

}
