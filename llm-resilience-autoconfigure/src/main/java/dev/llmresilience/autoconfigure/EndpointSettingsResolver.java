package dev.llmresilience.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import dev.llmresilience.endpoint.EndpointSettings;
import dev.llmresilience.protocol.ApiKey;
import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.OpenAiClientFactory;
import dev.llmresilience.protocol.anthropic.AnthropicClientFactory;
import dev.llmresilience.protocol.azure.AzureOpenAiClientFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/**
 * Turns {@link LlmProperties} into validated {@link EndpointSettings} (the routes are
 * {@link RouteResolver}'s): each endpoint's
 * own value, else {@code llm.defaults}, else the built-in default below. Every rejected value raises
 * an {@link LlmConfigurationException} naming the property where it was set.
 */
final class EndpointSettingsResolver {

	private final LlmProperties properties;

	private final Set<String> protocols;

	EndpointSettingsResolver(LlmProperties properties) {
		this(properties, Set.of(OpenAiClientFactory.PROTOCOL, AnthropicClientFactory.PROTOCOL,
				AzureOpenAiClientFactory.PROTOCOL));
	}

	/**
	 * @param properties the properties
	 * @param protocols the protocols an endpoint may name (those an {@code LlmClientFactory} serves)
	 */
	EndpointSettingsResolver(LlmProperties properties, Set<String> protocols) {
		this.properties = properties;
		this.protocols = Set.copyOf(protocols);
	}

	/**
	 * Resolve every endpoint, enabled or not, in priority order (then name).
	 * @return the settings
	 */
	List<EndpointSettings> endpoints() {
		if (this.properties.getEndpoints().isEmpty()) {
			throw new LlmConfigurationException("llm.endpoints", "has no endpoint while llm.enabled=true",
					"Configure at least one endpoint, e.g. llm.endpoints.gpt-4o.base-url=https://api.openai.com/v1 and "
							+ "llm.endpoints.gpt-4o.model=gpt-4o, or set llm.enabled=false to switch llm-resilience off. "
							+ "A name with a dot goes in brackets: llm.endpoints[gpt-4.1].model=gpt-4.1.");
		}
		List<EndpointSettings> settings = new ArrayList<>();
		this.properties.getEndpoints().forEach((name, endpoint) -> settings.add(resolve(name, endpoint)));
		settings.sort(Comparator.comparingInt(EndpointSettings::priority).thenComparing(EndpointSettings::name));
		return settings;
	}

	private EndpointSettings resolve(String name, EndpointProperties endpoint) {
		String prefix = property(name) + ".";
		if (!this.protocols.contains(endpoint.getProtocol())) {
			throw new LlmConfigurationException(prefix + "protocol", "is '" + endpoint.getProtocol() + "', which is not supported",
					"Use one of " + new TreeSet<>(this.protocols) + "; protocol=openai serves every OpenAI-compatible provider "
							+ "(OpenAI, Azure OpenAI v1, DeepSeek, OpenRouter, Ollama, vLLM), protocol=spring-ai a Spring AI "
							+ "ChatModel bean (with Spring AI on the class path).");
		}
		String chatModelBean = SpringAiEndpoints.chatModelBean(prefix, endpoint);
		URI baseUrl = (chatModelBean != null) ? SpringAiEndpoints.baseUrl(chatModelBean)
				: ProtocolSettings.baseUrl(prefix + "base-url", endpoint.getBaseUrl(), endpoint.getProtocol());
		if (chatModelBean == null) {
			PlainHttpWarning.warnIfOverTheNetwork(name, prefix + "base-url", baseUrl);
		}
		String model = endpoint.getModel();
		if (model == null || model.isBlank()) {
			throw new LlmConfigurationException(prefix + "model", "is missing", (chatModelBean != null)
					? "Set it to the model the ChatModel bean is to ask for (it is sent as its ChatOptions model), e.g. "
							+ prefix + "model=claude-sonnet-4-5."
					: "Set it to the model name the provider expects, e.g. " + prefix + "model=gpt-4o.");
		}
		ProtocolSettings.Values protocol = ProtocolSettings.resolve(prefix, endpoint, baseUrl);
		PropertyLayers layers = new PropertyLayers(prefix, endpoint, this.properties.getDefaults());
		ApiKey apiKey = ApiKey.of(endpoint.getApiKey());
		return new EndpointSettings(name, baseUrl, apiKey, model.trim(),
				endpoint.getProtocol(), endpoint.getPriority(), endpoint.getRegion(), endpoint.isEnabled(),
				HeaderRules.check(prefix + "headers", endpoint.getHeaders(), apiKey.isPresent()),
				price(prefix, endpoint.getPrice()),
				layers.positive("timeout", ResilienceProperties::getTimeout, Duration.ofSeconds(60)),
				layers.positive("connect-timeout", ResilienceProperties::getConnectTimeout, Duration.ofSeconds(5)),
				layers.positive("first-token-timeout", ResilienceProperties::getFirstTokenTimeout, Duration.ofSeconds(10)),
				layers.positive("stream-idle-timeout", ResilienceProperties::getStreamIdleTimeout, Duration.ofSeconds(30)),
				layers.size("max-response-size", ResilienceProperties::getMaxResponseSize, DataSize.ofMegabytes(10)),
				circuitBreaker(layers), retry(layers), bulkhead(layers),
				layers.value("upstream-streaming", ResilienceProperties::getUpstreamStreaming, Boolean.TRUE),
				protocol.anthropicVersion(), protocol.deployment(), protocol.apiVersion(),
				layers.size("max-stream-size", ResilienceProperties::getMaxStreamSize,
						DataSize.ofBytes(ClientSettings.DEFAULT_MAX_STREAM_SIZE)),
				layers.atLeast("max-stream-events", ResilienceProperties::getMaxStreamEvents,
						ClientSettings.DEFAULT_MAX_STREAM_EVENTS, 1L),
				chatModelBean);
	}

	// Boot splits an unbracketed map key at its dots: an endpoint named after a model such as
	// gpt-4.1 only binds as llm.endpoints[gpt-4.1], so that is how messages must name it.
	static String property(String endpoint) {
		return endpoint.contains(".") ? "llm.endpoints[" + endpoint + "]" : "llm.endpoints." + endpoint;
	}

	private static EndpointSettings.CircuitBreakerSettings circuitBreaker(PropertyLayers layers) {
		int window = layers.atLeast("circuit-breaker.sliding-window-size", (p) -> p.getCircuitBreaker().getSlidingWindowSize(), 20, 1);
		String minimumKey = "circuit-breaker.minimum-number-of-calls";
		// Unset, it follows a smaller window down, so that setting only the window is enough.
		int minimum = layers.atLeast(minimumKey, (p) -> p.getCircuitBreaker().getMinimumNumberOfCalls(),
				Math.min(20, window), 1);
		if (minimum > window) {
			throw new LlmConfigurationException(layers.source(minimumKey, (p) -> p.getCircuitBreaker().getMinimumNumberOfCalls()),
					"is " + minimum + ", more than the sliding window of " + window + " calls can ever hold",
					"Set it to at most circuit-breaker.sliding-window-size (" + window + "), or enlarge the window.");
		}
		return new EndpointSettings.CircuitBreakerSettings(window, minimum,
				layers.percent("circuit-breaker.failure-rate-threshold", (p) -> p.getCircuitBreaker().getFailureRateThreshold(), 50f),
				layers.positive("circuit-breaker.wait-duration-in-open-state", (p) -> p.getCircuitBreaker().getWaitDurationInOpenState(), Duration.ofSeconds(30)),
				layers.atLeast("circuit-breaker.permitted-calls-in-half-open-state", (p) -> p.getCircuitBreaker().getPermittedCallsInHalfOpenState(), 3, 1),
				layers.positive("circuit-breaker.slow-call-duration-threshold", (p) -> p.getCircuitBreaker().getSlowCallDurationThreshold(), Duration.ofSeconds(60)),
				layers.percent("circuit-breaker.slow-call-rate-threshold", (p) -> p.getCircuitBreaker().getSlowCallRateThreshold(), 100f),
				layers.value("circuit-breaker.probe", (p) -> p.getCircuitBreaker().getProbe(), EndpointSettings.Probe.SYNTHETIC));
	}

	private static EndpointSettings.RetrySettings retry(PropertyLayers layers) {
		int maxAttempts = layers.atLeast("retry.max-attempts", (p) -> p.getRetry().getMaxAttempts(), 3, 1);
		Duration initial = layers.positive("retry.initial-backoff", (p) -> p.getRetry().getInitialBackoff(), Duration.ofMillis(500));
		String multiplierKey = "retry.multiplier";
		double multiplier = layers.value(multiplierKey, (p) -> p.getRetry().getMultiplier(), 2.0);
		if (multiplier < 1.0) {
			throw layers.invalid(multiplierKey, (p) -> p.getRetry().getMultiplier(), "is " + multiplier + ", less than 1",
					"Use 1.0 for a constant backoff or more for an exponential one.");
		}
		Duration maxBackoff = layers.positive("retry.max-backoff", (p) -> p.getRetry().getMaxBackoff(), Duration.ofSeconds(8));
		String jitterKey = "retry.jitter";
		double jitter = layers.value(jitterKey, (p) -> p.getRetry().getJitter(), 0.25);
		if (jitter < 0 || jitter >= 1) {
			throw layers.invalid(jitterKey, (p) -> p.getRetry().getJitter(), "is " + jitter + ", outside [0, 1)",
					"Use a fraction such as 0.25 for +/- 25 %, or 0 for no jitter.");
		}
		Duration maxRetryAfter = layers.notNegative("retry.max-retry-after", (p) -> p.getRetry().getMaxRetryAfter(), Duration.ofSeconds(10));
		return new EndpointSettings.RetrySettings(maxAttempts, initial, multiplier, maxBackoff, jitter, maxRetryAfter);
	}

	private static EndpointSettings.BulkheadSettings bulkhead(PropertyLayers layers) {
		return new EndpointSettings.BulkheadSettings(
				layers.atLeast("bulkhead.max-concurrent-calls", (p) -> p.getBulkhead().getMaxConcurrentCalls(), 50, 1),
				layers.notNegative("bulkhead.max-wait", (p) -> p.getBulkhead().getMaxWait(), Duration.ZERO));
	}

	private static EndpointSettings.@Nullable Price price(String prefix, EndpointProperties.Price price) {
		Double input = price.getInputPerMillion();
		Double output = price.getOutputPerMillion();
		if (input == null && output == null) {
			return null;
		}
		if ((input != null && input < 0) || (output != null && output < 0)) {
			throw new LlmConfigurationException(prefix + "price", "has a negative price",
					"Give prices per million tokens as zero or positive numbers.");
		}
		return new EndpointSettings.Price((input != null) ? input : 0, (output != null) ? output : 0);
	}

}
