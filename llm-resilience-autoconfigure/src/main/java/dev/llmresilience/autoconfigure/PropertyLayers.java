package dev.llmresilience.autoconfigure;

import java.time.Duration;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/**
 * Looks a resilience key up in an endpoint, then in {@code llm.defaults}, then takes the built-in
 * default, and checks the value, naming the property where it was set when it is rejected.
 *
 * @param prefix the endpoint's property prefix, with its trailing dot
 * @param endpoint the endpoint's properties
 * @param defaults {@code llm.defaults}
 */
record PropertyLayers(String prefix, EndpointProperties endpoint, ResilienceProperties defaults) {

	private static final Duration ONE_MILLISECOND = Duration.ofMillis(1);

	<T> T value(String key, Function<ResilienceProperties, @Nullable T> getter, T builtIn) {
		T own = getter.apply(this.endpoint);
		if (own != null) {
			return own;
		}
		T common = getter.apply(this.defaults);
		return (common != null) ? common : builtIn;
	}

	String source(String key, Function<ResilienceProperties, @Nullable Object> getter) {
		return (getter.apply(this.endpoint) != null) ? this.prefix + key : "llm.defaults." + key;
	}

	LlmConfigurationException invalid(String key, Function<ResilienceProperties, @Nullable Object> getter,
			String problem, String action) {
		return new LlmConfigurationException(source(key, getter), problem, action);
	}

	Duration positive(String key, Function<ResilienceProperties, @Nullable Duration> getter, Duration builtIn) {
		Duration value = value(key, getter, builtIn);
		if (value.isNegative() || value.isZero()) {
			throw invalid(key, getter::apply, "is " + value + ", but must be positive",
					"Use a positive duration such as 500ms, 30s or 5m.");
		}
		// Netty reads a connect timeout of 0ms as none, and Resilience4j refuses an open state under 1ms.
		if (value.compareTo(ONE_MILLISECOND) < 0) {
			throw invalid(key, getter::apply, "is " + value + ", but must be at least 1ms",
					"Use a duration of 1ms or more, such as 500ms, 30s or 5m.");
		}
		return value;
	}

	Duration notNegative(String key, Function<ResilienceProperties, @Nullable Duration> getter, Duration builtIn) {
		Duration value = value(key, getter, builtIn);
		if (value.isNegative()) {
			throw invalid(key, getter::apply, "is " + value + ", but must not be negative",
					"Use 0ms or a positive duration.");
		}
		return value;
	}

	<N extends Number & Comparable<N>> N atLeast(String key, Function<ResilienceProperties, @Nullable N> getter,
			N builtIn, N minimum) {
		N value = value(key, getter, builtIn);
		if (value.compareTo(minimum) < 0) {
			throw invalid(key, getter::apply, "is " + value + ", but must be at least " + minimum,
					"Set it to " + minimum + " or more (built-in default: " + builtIn + ").");
		}
		return value;
	}

	float percent(String key, Function<ResilienceProperties, @Nullable Float> getter, float builtIn) {
		float value = value(key, getter, builtIn);
		if (value <= 0 || value > 100) {
			throw invalid(key, getter::apply, "is " + value + ", outside the range (0, 100]",
					"Give a percentage above 0 and at most 100, e.g. 50 (built-in default: " + builtIn + ").");
		}
		return value;
	}

	long size(String key, Function<ResilienceProperties, @Nullable DataSize> getter, DataSize builtIn) {
		DataSize value = value(key, getter, builtIn);
		if (value.toBytes() < 1024 || value.toBytes() > Integer.MAX_VALUE) {
			throw invalid(key, getter::apply, "is " + value + ", outside 1KB to 2GB",
					"Use a size such as 10MB.");
		}
		return value.toBytes();
	}

}
