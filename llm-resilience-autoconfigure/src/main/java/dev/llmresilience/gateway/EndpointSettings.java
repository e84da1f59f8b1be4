package dev.llmresilience.gateway;

import java.math.BigDecimal;
import java.math.MathContext;
import java.net.URI;
import java.time.Duration;
import java.util.Map;

import dev.llmresilience.chat.Usage;
import dev.llmresilience.protocol.ApiKey;
import dev.llmresilience.protocol.ClientSettings;
import org.jspecify.annotations.Nullable;

/**
 * The resolved, validated settings of one endpoint: its own values over {@code llm.defaults} over
 * the built-in defaults. Its {@link #toString()} shows no key and no header value.
 *
 * @param name the endpoint's name (its circuit-breaker bucket)
 * @param baseUrl the API's base URL
 * @param apiKey the key
 * @param model the model name
 * @param protocol the wire protocol
 * @param priority lower is tried first in the default route
 * @param region a label, or {@code null}
 * @param enabled whether the endpoint takes part in routes
 * @param headers extra request headers
 * @param price token prices, or {@code null}
 * @param timeout per-attempt timeout
 * @param connectTimeout TCP connect timeout
 * @param firstTokenTimeout time from the request to the first content chunk, for every call that
 * goes upstream as a stream (chat included)
 * @param streamIdleTimeout longest silence between chunks once tokens flow
 * @param maxResponseSize largest body read, in bytes
 * @param circuitBreaker the breaker's settings
 * @param retry the retry's settings
 * @param bulkhead the bulkhead's settings
 * @param upstreamStreaming send {@code chat} calls upstream as streams and assemble the answer, so
 * that the first-token and idle timeouts bound them too
 * @param anthropicVersion the {@code anthropic-version} of protocol {@code anthropic}, else {@code null}
 * @param deployment the Azure OpenAI deployment of protocol {@code azure-openai}, else {@code null}
 * @param apiVersion the Azure OpenAI {@code api-version} of protocol {@code azure-openai}, else {@code null}
 * @param maxStreamSize most bytes one streamed attempt may send in all
 * @param maxStreamEvents most server-sent events one streamed attempt may send
 * @param chatModelBean the Spring AI {@code ChatModel} bean of protocol {@code spring-ai}, else {@code null}
 */
public record EndpointSettings(String name, URI baseUrl, ApiKey apiKey, String model, String protocol, int priority,
		@Nullable String region, boolean enabled, Map<String, String> headers, @Nullable Price price,
		Duration timeout, Duration connectTimeout, Duration firstTokenTimeout, Duration streamIdleTimeout,
		long maxResponseSize, CircuitBreakerSettings circuitBreaker, RetrySettings retry, BulkheadSettings bulkhead,
		boolean upstreamStreaming, @Nullable String anthropicVersion, @Nullable String deployment,
		@Nullable String apiVersion, long maxStreamSize, long maxStreamEvents, @Nullable String chatModelBean) {

	public EndpointSettings {
		headers = Map.copyOf(headers);
	}

	/**
	 * Settings with none of the protocol-specific values, as protocol {@code openai} needs them, and the
	 * built-in stream limits.
	 * @param name the endpoint's name (its circuit-breaker bucket)
	 * @param baseUrl the API's base URL
	 * @param apiKey the key
	 * @param model the model name
	 * @param protocol the wire protocol
	 * @param priority lower is tried first in the default route
	 * @param region a label, or {@code null}
	 * @param enabled whether the endpoint takes part in routes
	 * @param headers extra request headers
	 * @param price token prices, or {@code null}
	 * @param timeout per-attempt timeout
	 * @param connectTimeout TCP connect timeout
	 * @param firstTokenTimeout time to the first content chunk
	 * @param streamIdleTimeout longest silence between chunks
	 * @param maxResponseSize largest body read, in bytes
	 * @param circuitBreaker the breaker's settings
	 * @param retry the retry's settings
	 * @param bulkhead the bulkhead's settings
	 * @param upstreamStreaming send {@code chat} calls upstream as streams
	 */
	public EndpointSettings(String name, URI baseUrl, ApiKey apiKey, String model, String protocol, int priority,
			@Nullable String region, boolean enabled, Map<String, String> headers, @Nullable Price price,
			Duration timeout, Duration connectTimeout, Duration firstTokenTimeout, Duration streamIdleTimeout,
			long maxResponseSize, CircuitBreakerSettings circuitBreaker, RetrySettings retry, BulkheadSettings bulkhead,
			boolean upstreamStreaming) {
		this(name, baseUrl, apiKey, model, protocol, priority, region, enabled, headers, price, timeout, connectTimeout,
				firstTokenTimeout, streamIdleTimeout, maxResponseSize, circuitBreaker, retry, bulkhead, upstreamStreaming,
				null, null, null, ClientSettings.DEFAULT_MAX_STREAM_SIZE, ClientSettings.DEFAULT_MAX_STREAM_EVENTS, null);
	}

	/**
	 * Settings with none of the protocol-specific values that send {@code chat} upstream as a stream.
	 * @param name the endpoint's name (its circuit-breaker bucket)
	 * @param baseUrl the API's base URL
	 * @param apiKey the key
	 * @param model the model name
	 * @param protocol the wire protocol
	 * @param priority lower is tried first in the default route
	 * @param region a label, or {@code null}
	 * @param enabled whether the endpoint takes part in routes
	 * @param headers extra request headers
	 * @param price token prices, or {@code null}
	 * @param timeout per-attempt timeout
	 * @param connectTimeout TCP connect timeout
	 * @param firstTokenTimeout time to the first content chunk
	 * @param streamIdleTimeout longest silence between chunks
	 * @param maxResponseSize largest body read, in bytes
	 * @param circuitBreaker the breaker's settings
	 * @param retry the retry's settings
	 * @param bulkhead the bulkhead's settings
	 */
	public EndpointSettings(String name, URI baseUrl, ApiKey apiKey, String model, String protocol, int priority,
			@Nullable String region, boolean enabled, Map<String, String> headers, @Nullable Price price,
			Duration timeout, Duration connectTimeout, Duration firstTokenTimeout, Duration streamIdleTimeout,
			long maxResponseSize, CircuitBreakerSettings circuitBreaker, RetrySettings retry, BulkheadSettings bulkhead) {
		this(name, baseUrl, apiKey, model, protocol, priority, region, enabled, headers, price, timeout, connectTimeout,
				firstTokenTimeout, streamIdleTimeout, maxResponseSize, circuitBreaker, retry, bulkhead, true);
	}

	/**
	 * What the endpoint's protocol client needs of these settings.
	 * @return the client's settings
	 */
	public ClientSettings client() {
		return new ClientSettings(this.name, this.baseUrl, this.apiKey, this.model, this.headers, this.connectTimeout,
				this.maxResponseSize, this.bulkhead.maxConcurrentCalls(), this.anthropicVersion, this.deployment,
				this.apiVersion, this.maxStreamSize, this.maxStreamEvents, this.chatModelBean);
	}

	/**
	 * The provider's name as OpenTelemetry's GenAI conventions spell it ({@code gen_ai.provider.name}),
	 * guessed from the base URL's host, else from the protocol ({@code anthropic},
	 * {@code azure-openai}); the protocol's name for a host that is not known.
	 * @return the provider's name
	 */
	public String providerName() {
		return ProviderNames.of(this.baseUrl, this.protocol);
	}

	@Override
	public String toString() {
		return "EndpointSettings[name=" + this.name + ", baseUrl=" + this.baseUrl + ", model=" + this.model
				+ ", region=" + this.region + ", priority=" + this.priority + ", headers=" + this.headers.keySet() + "]";
	}

	/**
	 * Token prices per million tokens.
	 *
	 * @param inputPerMillion price of a million prompt tokens
	 * @param outputPerMillion price of a million completion tokens
	 */
	public record Price(double inputPerMillion, double outputPerMillion) {

		/**
		 * What the tokens of one answer cost.
		 * @param usage the answer's token counts, or {@code null}
		 * @return the cost, or {@code null} without counts
		 */
		public @Nullable BigDecimal costOf(@Nullable Usage usage) {
			if (usage == null) {
				return null;
			}
			BigDecimal input = BigDecimal.valueOf(this.inputPerMillion)
				.multiply(BigDecimal.valueOf((usage.promptTokens() != null) ? usage.promptTokens() : 0));
			BigDecimal output = BigDecimal.valueOf(this.outputPerMillion)
				.multiply(BigDecimal.valueOf((usage.completionTokens() != null) ? usage.completionTokens() : 0));
			return input.add(output).divide(MILLION, MathContext.DECIMAL64).stripTrailingZeros();
		}

		private static final BigDecimal MILLION = BigDecimal.valueOf(1_000_000);

	}

	/**
	 * Circuit breaker settings.
	 *
	 * @param slidingWindowSize calls in the count-based window
	 * @param minimumNumberOfCalls calls before the rate is computed
	 * @param failureRateThreshold percent at which it opens
	 * @param waitDurationInOpenState time open before probing
	 * @param permittedCallsInHalfOpenState number of probes
	 * @param slowCallDurationThreshold duration of a slow call
	 * @param slowCallRateThreshold percent of slow calls at which it opens
	 * @param probe who sends the half-open probes
	 */
	public record CircuitBreakerSettings(int slidingWindowSize, int minimumNumberOfCalls, float failureRateThreshold,
			Duration waitDurationInOpenState, int permittedCallsInHalfOpenState, Duration slowCallDurationThreshold,
			float slowCallRateThreshold, Probe probe) {

		/**
		 * @throws InvalidSettingException when the window could never hold the minimum number of calls
		 */
		public CircuitBreakerSettings {
			if (minimumNumberOfCalls > slidingWindowSize) {
				throw new InvalidSettingException("circuit-breaker.minimum-number-of-calls", "is " + minimumNumberOfCalls
						+ ", more than the sliding window of " + slidingWindowSize + " calls can ever hold",
						"Set it to at most circuit-breaker.sliding-window-size (" + slidingWindowSize
								+ "), or enlarge the window.");
			}
		}

		/**
		 * Settings whose half-open probes are users' calls ({@link Probe#REQUESTS}).
		 * @param slidingWindowSize calls in the count-based window
		 * @param minimumNumberOfCalls calls before the rate is computed
		 * @param failureRateThreshold percent at which it opens
		 * @param waitDurationInOpenState time open before probing
		 * @param permittedCallsInHalfOpenState number of probes
		 * @param slowCallDurationThreshold duration of a slow call
		 * @param slowCallRateThreshold percent of slow calls at which it opens
		 */
		public CircuitBreakerSettings(int slidingWindowSize, int minimumNumberOfCalls, float failureRateThreshold,
				Duration waitDurationInOpenState, int permittedCallsInHalfOpenState, Duration slowCallDurationThreshold,
				float slowCallRateThreshold) {
			this(slidingWindowSize, minimumNumberOfCalls, failureRateThreshold, waitDurationInOpenState,
					permittedCallsInHalfOpenState, slowCallDurationThreshold, slowCallRateThreshold, Probe.REQUESTS);
		}

	}

	/** Who sends a breaker's half-open probes. */
	public enum Probe {

		/**
		 * The library, as soon as the open state's wait has passed: a minimal request (the endpoint's
		 * model, one short user message, a max-tokens of 1); users' calls go to the route's next
		 * endpoint until the breaker has closed, so none waits on a model believed down, and the
		 * breaker recovers with no traffic at all.
		 */
		SYNTHETIC,

		/** Users' calls, once the wait has passed: the first ones to arrive are the probes. */
		REQUESTS

	}

	/**
	 * Retry settings.
	 *
	 * @param maxAttempts attempts in all
	 * @param initialBackoff first wait
	 * @param multiplier growth of the wait
	 * @param maxBackoff cap of the wait
	 * @param jitter random spread, as a fraction
	 * @param maxRetryAfter longest Retry-After waited for
	 */
	public record RetrySettings(int maxAttempts, Duration initialBackoff, double multiplier, Duration maxBackoff,
			double jitter, Duration maxRetryAfter) {

		/**
		 * @throws InvalidSettingException when the backoff would shrink or the jitter is not a fraction
		 */
		public RetrySettings {
			if (multiplier < 1.0) {
				throw new InvalidSettingException("retry.multiplier", "is " + multiplier + ", less than 1",
						"Use 1.0 for a constant backoff or more for an exponential one.");
			}
			if (jitter < 0 || jitter >= 1) {
				throw new InvalidSettingException("retry.jitter", "is " + jitter + ", outside [0, 1)",
						"Use a fraction such as 0.25 for +/- 25 %, or 0 for no jitter.");
			}
		}

		/**
		 * The wait before retry number {@code retry} (1 for the first), before jitter:
		 * {@code initialBackoff * multiplier^(retry-1)}, capped at {@code maxBackoff}.
		 * @param retry the retry's number, from 1
		 * @return the wait in milliseconds
		 */
		public long backoffMillis(int retry) {
			double wait = this.initialBackoff.toMillis() * Math.pow(this.multiplier, Math.max(0, retry - 1));
			return (long) Math.min(wait, this.maxBackoff.toMillis());
		}

	}

	/**
	 * Bulkhead settings.
	 *
	 * @param maxConcurrentCalls calls in flight at once
	 * @param maxWait wait for a permit
	 */
	public record BulkheadSettings(int maxConcurrentCalls, Duration maxWait) {
	}

	/**
	 * An {@link EndpointSettings} record refused a value that breaks one of its invariants. Names the
	 * setting by its key under an endpoint (e.g. {@code circuit-breaker.minimum-number-of-calls}), so
	 * that the auto-configuration can report it as the property where the value was set.
	 */
	public static class InvalidSettingException extends IllegalArgumentException {

		private final String setting;

		private final String problem;

		private final String action;

		/**
		 * Create an instance.
		 * @param setting the setting's key under an endpoint, e.g. {@code retry.jitter}
		 * @param problem what is wrong with its value, e.g. "is 1.5, outside [0, 1)"
		 * @param action what to do about it
		 */
		public InvalidSettingException(String setting, String problem, String action) {
			super(setting + ": " + problem + ". " + action);
			this.setting = setting;
			this.problem = problem;
			this.action = action;
		}

		/**
		 * The setting at fault.
		 * @return its key under an endpoint
		 */
		public String setting() {
			return this.setting;
		}

		/**
		 * What is wrong.
		 * @return the problem
		 */
		public String problem() {
			return this.problem;
		}

		/**
		 * What to do.
		 * @return the action
		 */
		public String action() {
			return this.action;
		}

	}

}
