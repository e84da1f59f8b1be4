package dev.llmresilience.engine;

import java.time.Duration;
import java.util.function.Function;

import dev.llmresilience.autoconfigure.EndpointProperties;
import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.ResilienceProperties;
import dev.llmresilience.gateway.EndpointSettings.InvalidSettingException;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.util.unit.DataSize;

/**
 * Looks a resilience key up in an endpoint, then in {@code llm.defaults}, then takes the built-in
 * default ({@link ResilienceDefaults}), and checks the value through {@link LlmConfigurationException}, naming the
 * property where it was set when it is rejected.
 *
 * @param prefix the endpoint's property prefix, with its trailing dot
 * @param endpoint the endpoint's properties
 * @param defaults {@code llm.defaults}
 * @param builtIn the built-in defaults, every key set
 */
record PropertyLayers(String prefix, EndpointProperties endpoint, ResilienceProperties defaults,
		ResilienceProperties builtIn) {

	PropertyLayers(String prefix, EndpointProperties endpoint, ResilienceProperties defaults) {
		this(prefix, endpoint, defaults, ResilienceDefaults.builtIn());
	}

	<T> T value(String key, Function<ResilienceProperties, @Nullable T> getter) {
		T own = getter.apply(this.endpoint);
		if (own != null) {
			return own;
		}
		T common = getter.apply(this.defaults);
		return (common != null) ? common : builtIn(getter);
	}

	<T> T builtIn(Function<ResilienceProperties, @Nullable T> getter) {
		T builtIn = getter.apply(this.builtIn);
		if (builtIn == null) {
			throw new IllegalStateException("ResilienceDefaults has no built-in value for a key");
		}
		return builtIn;
	}

	boolean isSet(Function<ResilienceProperties, @Nullable Object> getter) {
		return getter.apply(this.endpoint) != null || getter.apply(this.defaults) != null;
	}

	String source(String key, Function<ResilienceProperties, @Nullable Object> getter) {
		return (getter.apply(this.endpoint) != null) ? this.prefix + key : "llm.defaults." + key;
	}

	/**
	 * The property a key was set at, found by the key's name ({@code circuit-breaker.minimum-number-of-calls}
	 * is {@code getCircuitBreaker().getMinimumNumberOfCalls()}): for a rule that a settings record
	 * checks and names by its key.
	 */
	String source(String key) {
		StringBuilder path = new StringBuilder();
		boolean upper = false;
		for (char c : key.toCharArray()) {
			if (c == '-') {
				upper = true;
				continue;
			}
			path.append(upper ? Character.toUpperCase(c) : c);
			upper = false;
		}
		Object own = new BeanWrapperImpl(this.endpoint).getPropertyValue(path.toString());
		return (own != null) ? this.prefix + key : "llm.defaults." + key;
	}

	LlmConfigurationException invalid(InvalidSettingException ex) {
		return new LlmConfigurationException(source(ex.setting()), ex.problem(), ex.action());
	}

	Duration positive(String key, Function<ResilienceProperties, @Nullable Duration> getter) {
		return LlmConfigurationException.atLeastOneMillisecond(source(key, getter::apply), value(key, getter), "500ms, 30s or 5m");
	}

	Duration notNegative(String key, Function<ResilienceProperties, @Nullable Duration> getter) {
		return LlmConfigurationException.notNegative(source(key, getter::apply), value(key, getter), "Use 0ms or a positive duration.");
	}

	<N extends Number & Comparable<N>> N atLeast(String key, Function<ResilienceProperties, @Nullable N> getter,
			N minimum) {
		return atLeast(key, getter, value(key, getter), minimum);
	}

	<N extends Number & Comparable<N>> N atLeast(String key, Function<ResilienceProperties, @Nullable N> getter,
			N value, N minimum) {
		return LlmConfigurationException.atLeast(source(key, getter::apply), value, minimum,
				"Set it to " + minimum + " or more (built-in default: " + builtIn(getter) + ").");
	}

	float percent(String key, Function<ResilienceProperties, @Nullable Float> getter) {
		float value = value(key, getter);
		LlmConfigurationException.check(value > 0 && value <= 100, source(key, getter::apply), value, "outside the range (0, 100]",
				"Give a percentage above 0 and at most 100, e.g. 50 (built-in default: " + builtIn(getter) + ").");
		return value;
	}

	long size(String key, Function<ResilienceProperties, @Nullable DataSize> getter) {
		return LlmConfigurationException.size(source(key, getter::apply), value(key, getter), "Use a size such as 10MB.");
	}

}
