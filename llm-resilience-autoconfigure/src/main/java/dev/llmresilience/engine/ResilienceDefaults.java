package dev.llmresilience.engine;

import dev.llmresilience.autoconfigure.ResilienceProperties;
import dev.llmresilience.autoconfigure.RetryProperties;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings.Limits;

import org.springframework.util.unit.DataSize;

/**
 * The built-in value of every {@link ResilienceProperties} key, as the last layer under an
 * endpoint's own value and {@code llm.defaults}: the {@code DEFAULT} of each settings record
 * ({@link EndpointSettings.Timeouts#DEFAULT}, {@link Limits#DEFAULT},
 * {@link EndpointSettings.CircuitBreakerSettings#DEFAULT}, {@link EndpointSettings.RetrySettings#DEFAULT},
 * {@link EndpointSettings.BulkheadSettings#DEFAULT}, {@link EndpointSettings.Liveness#DEFAULT},
 * {@link EndpointSettings.RateLimits#DEFAULT}), the one place they are declared, so that
 * settings built in code ({@link EndpointSettings#builder}) start from the same values. The
 * "Default ..." of each key's javadoc and {@code additional-spring-configuration-metadata.json} state
 * them for people and IDEs; {@code ConfigurationMetadataTests} fails when those and these differ.
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
		EndpointSettings.Timeouts timeouts = EndpointSettings.Timeouts.DEFAULT;
		builtIn.setTimeout(timeouts.timeout());
		builtIn.setConnectTimeout(timeouts.connectTimeout());
		builtIn.setFirstTokenTimeout(timeouts.firstTokenTimeout());
		builtIn.setStreamIdleTimeout(timeouts.streamIdleTimeout());
		builtIn.setUpstreamStreaming(timeouts.upstreamStreaming());
		builtIn.setMaxResponseSize(DataSize.ofBytes(Limits.DEFAULT.maxResponseSize()));
		builtIn.setMaxStreamSize(DataSize.ofBytes(Limits.DEFAULT.maxStreamSize()));
		builtIn.setMaxStreamEvents(Limits.DEFAULT.maxStreamEvents());
		EndpointSettings.CircuitBreakerSettings breakerDefault = EndpointSettings.CircuitBreakerSettings.DEFAULT;
		ResilienceProperties.CircuitBreaker breaker = builtIn.getCircuitBreaker();
		breaker.setSlidingWindowSize(breakerDefault.slidingWindowSize());
		// an unset minimum follows a smaller window down (EndpointSettingsResolver), so that setting
		// only the window is enough
		breaker.setMinimumNumberOfCalls(breakerDefault.minimumNumberOfCalls());
		breaker.setFailureRateThreshold(breakerDefault.failureRateThreshold());
		breaker.setWaitDurationInOpenState(breakerDefault.waitDurationInOpenState());
		breaker.setPermittedCallsInHalfOpenState(breakerDefault.permittedCallsInHalfOpenState());
		breaker.setSlowCallDurationThreshold(breakerDefault.slowCallDurationThreshold());
		breaker.setSlowCallRateThreshold(breakerDefault.slowCallRateThreshold());
		breaker.setProbe(breakerDefault.probe());
		breaker.setStartOrderWait(breakerDefault.startOrderWait());
		EndpointSettings.RetrySettings retryDefault = EndpointSettings.RetrySettings.DEFAULT;
		RetryProperties retry = builtIn.getRetry();
		retry.setMaxAttempts(retryDefault.maxAttempts());
		retry.setInitialBackoff(retryDefault.initialBackoff());
		retry.setMultiplier(retryDefault.multiplier());
		retry.setMaxBackoff(retryDefault.maxBackoff());
		retry.setJitter(retryDefault.jitter());
		retry.setMaxRetryAfter(retryDefault.maxRetryAfter());
		retry.setBudget(retryDefault.budget());
		retry.setBudgetMinPerSecond(retryDefault.budgetMinPerSecond());
		builtIn.getRateLimits().setRequestsPerMinute(EndpointSettings.RateLimits.DEFAULT.requestsPerMinute());
		builtIn.getRateLimits().setTokensPerMinute(EndpointSettings.RateLimits.DEFAULT.tokensPerMinute());
		builtIn.getBulkhead().setMaxConcurrentCalls(EndpointSettings.BulkheadSettings.DEFAULT.maxConcurrentCalls());
		builtIn.getBulkhead().setMaxWait(EndpointSettings.BulkheadSettings.DEFAULT.maxWait());
		builtIn.getBulkhead().setReleasedCallsWait(EndpointSettings.BulkheadSettings.DEFAULT.releasedCallsWait());
		EndpointSettings.Liveness livenessDefault = EndpointSettings.Liveness.DEFAULT;
		ResilienceProperties.Liveness liveness = builtIn.getLiveness();
		liveness.getHangDetection().setEnabled(livenessDefault.hangDetection());
		liveness.getHangDetection().setP99Multiple(livenessDefault.p99Multiple());
		liveness.getHangDetection().setFloor(livenessDefault.hangFloor());
		liveness.getHangDetection().setMinWaitingCalls(livenessDefault.minWaitingCalls());
		liveness.setProbeFloor(livenessDefault.probeFloor());
		return builtIn;
	}

}
