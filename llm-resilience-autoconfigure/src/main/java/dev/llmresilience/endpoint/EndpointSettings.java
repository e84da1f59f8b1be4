package dev.llmresilience.endpoint;

import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

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
 * @param firstTokenTimeout streaming: time to the first content chunk
 * @param streamIdleTimeout streaming: longest silence between chunks
 * @param maxResponseSize largest body read, in bytes
 * @param circuitBreaker the breaker's settings
 * @param retry the retry's settings
 * @param bulkhead the bulkhead's settings
 * @param chatModelBean for {@code protocol: spring-ai}, the Spring AI {@code ChatModel} bean's name; else {@code null}
 */
public record EndpointSettings(String name, URI baseUrl, ApiKey apiKey, String model, String protocol, int priority,
		@Nullable String region, boolean enabled, Map<String, String> headers, @Nullable Price price,
		Duration timeout, Duration connectTimeout, Duration firstTokenTimeout, Duration streamIdleTimeout,
		long maxResponseSize, CircuitBreakerSettings circuitBreaker, RetrySettings retry, BulkheadSettings bulkhead,
		@Nullable String chatModelBean) {

	public EndpointSettings {
		headers = Map.copyOf(headers);
	}

	/**
	 * Settings of an endpoint that no protocol-specific setting concerns.
	 * @param name the endpoint's name
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
	 * @param firstTokenTimeout streaming: time to the first content chunk
	 * @param streamIdleTimeout streaming: longest silence between chunks
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
				firstTokenTimeout, streamIdleTimeout, maxResponseSize, circuitBreaker, retry, bulkhead, null);
	}

	/**
	 * What the endpoint's protocol client needs of these settings.
	 * @return the client's settings
	 */
	public ClientSettings client() {
		return new ClientSettings(this.name, this.baseUrl, this.apiKey, this.model, this.headers, this.connectTimeout,
				this.maxResponseSize, this.bulkhead.maxConcurrentCalls(), this.chatModelBean);
	}

	/**
	 * The provider's name as OpenTelemetry's GenAI conventions spell it ({@code gen_ai.provider.name}),
	 * guessed from the base URL's host; the protocol's name for a host that is not known.
	 * @return the provider's name
	 */
	public String providerName() {
		String host = (this.baseUrl.getHost() != null) ? this.baseUrl.getHost().toLowerCase(Locale.ROOT) : "";
		if (host.endsWith("openai.azure.com") || host.endsWith("services.ai.azure.com")) {
			return "azure.ai.openai";
		}
		if (host.endsWith("openai.com")) {
			return "openai";
		}
		if (host.endsWith("deepseek.com")) {
			return "deepseek";
		}
		if (host.endsWith("openrouter.ai")) {
			return "openrouter";
		}
		if (host.endsWith("mistral.ai")) {
			return "mistral_ai";
		}
		if (host.endsWith("groq.com")) {
			return "groq";
		}
		return this.protocol;
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
	 */
	public record CircuitBreakerSettings(int slidingWindowSize, int minimumNumberOfCalls, float failureRateThreshold,
			Duration waitDurationInOpenState, int permittedCallsInHalfOpenState, Duration slowCallDurationThreshold,
			float slowCallRateThreshold) {
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

}
