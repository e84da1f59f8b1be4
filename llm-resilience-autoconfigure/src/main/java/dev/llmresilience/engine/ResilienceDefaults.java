package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.autoconfigure.ResilienceProperties;
import dev.llmresilience.autoconfigure.RetryProperties;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings;

import org.springframework.util.unit.DataSize;

/**
 * The built-in value of every {@link ResilienceProperties} key, the one place they are declared:
 * the last layer under an endpoint's own value and {@code llm.defaults}. The "Default ..." of each
 * key's javadoc and {@code additional-spring-configuration-metadata.json} state them for people
 * and IDEs; {@code ConfigurationMetadataTests} fails when those and these differ.
 */
final class ResilienceDefaults {

	private ResilienceDefaults() {
	}

	/**
	 * A fresh set of the built-in values (the properties are mutable, so none is shared).
	 * @return properties with every key set to its built-in default
	 */
	static ResilienceProperties builtIn() {
		ResilienceProperties builtIn = new ResilienceProperties();
		builtIn.setTimeout(Duration.ofSeconds(60));
		builtIn.setConnectTimeout(Duration.ofSeconds(5));
		builtIn.setFirstTokenTimeout(Duration.ofSeconds(10));
		builtIn.setStreamIdleTimeout(Duration.ofSeconds(30));
		builtIn.setUpstreamStreaming(true);
		builtIn.setMaxResponseSize(DataSize.ofMegabytes(10));
		builtIn.setMaxStreamSize(DataSize.ofBytes(ClientSettings.DEFAULT_MAX_STREAM_SIZE));
		builtIn.setMaxStreamEvents(ClientSettings.DEFAULT_MAX_STREAM_EVENTS);
		ResilienceProperties.CircuitBreaker breaker = builtIn.getCircuitBreaker();
		breaker.setSlidingWindowSize(20);
		// an unset minimum follows a smaller window down (EndpointSettingsResolver), so that setting
		// only the window is enough
		breaker.setMinimumNumberOfCalls(20);
		breaker.setFailureRateThreshold(50f);
		breaker.setWaitDurationInOpenState(Duration.ofSeconds(30));
		breaker.setPermittedCallsInHalfOpenState(3);
		breaker.setSlowCallDurationThreshold(Duration.ofSeconds(60));
		breaker.setSlowCallRateThreshold(100f);
		breaker.setProbe(EndpointSettings.Probe.SYNTHETIC);
		RetryProperties retry = builtIn.getRetry();
		retry.setMaxAttempts(3);
		retry.setInitialBackoff(Duration.ofMillis(500));
		retry.setMultiplier(2.0);
		retry.setMaxBackoff(Duration.ofSeconds(8));
		retry.setJitter(0.25);
		retry.setMaxRetryAfter(Duration.ofSeconds(10));
		builtIn.getBulkhead().setMaxConcurrentCalls(50);
		builtIn.getBulkhead().setMaxWait(Duration.ZERO);
		return builtIn;
	}

}
