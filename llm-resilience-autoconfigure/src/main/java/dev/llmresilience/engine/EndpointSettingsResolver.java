package dev.llmresilience.engine;

import java.net.URI;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;

import dev.llmresilience.autoconfigure.EndpointProperties;
import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.autoconfigure.ResilienceProperties;
import dev.llmresilience.autoconfigure.SpringAiProperties;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.EndpointSettings.InvalidSettingException;
import dev.llmresilience.protocol.ApiKey;
import dev.llmresilience.protocol.ClientSettings.InvalidOptionException;
import dev.llmresilience.protocol.ClientSettings.Limits;
import dev.llmresilience.protocol.ClientSettings.ProtocolOptions;
import dev.llmresilience.protocol.LlmClientFactory;
import org.jspecify.annotations.Nullable;

/**
 * Turns {@link LlmProperties} into validated {@link EndpointSettings} (the routes are
 * {@link RouteResolver}'s): each endpoint's own value, else {@code llm.defaults}, else the built-in
 * default of {@link ResilienceDefaults}; the protocol-specific keys as the protocol's
 * {@link LlmClientFactory#options} keeps them. Every rejected value raises an
 * {@link LlmConfigurationException} naming the property where it was set, for the rules of the
 * settings records (their {@link InvalidSettingException}) and of the protocols (their
 * {@link InvalidOptionException}) too.
 */
final class EndpointSettingsResolver {

	private final LlmProperties properties;

	private final Map<String, LlmClientFactory> protocols;

	/**
	 * @param properties the properties
	 * @param protocols the protocols an endpoint may name, by name
	 */
	EndpointSettingsResolver(LlmProperties properties, Map<String, LlmClientFactory> protocols) {
		this.properties = properties;
		this.protocols = Map.copyOf(protocols);
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
		settings.sort(Comparator.comparingInt((EndpointSettings endpoint) -> endpoint.routing().priority())
			.thenComparing(EndpointSettings::name));
		return settings;
	}

	private EndpointSettings resolve(String name, EndpointProperties endpoint) {
		String prefix = property(name) + ".";
		LlmClientFactory factory = this.protocols.get(endpoint.getProtocol());
		if (factory == null) {
			throw new LlmConfigurationException(prefix + "protocol", "is '" + endpoint.getProtocol() + "', which is not supported",
					"Use one of " + new TreeSet<>(this.protocols.keySet()) + "; protocol=openai serves every OpenAI-compatible provider "
							+ "(OpenAI, Azure OpenAI v1, DeepSeek, OpenRouter, Ollama, vLLM), protocol=openai-responses OpenAI's "
							+ "Responses API (POST {base-url}/responses), protocol=spring-ai a Spring AI "
							+ "ChatModel bean (with Spring AI on the class path).");
		}
		String chatModelBean = SpringAiProperties.chatModelBean(prefix, endpoint);
		URI baseUrl = (chatModelBean != null) ? SpringAiProperties.baseUrl(chatModelBean)
				: BaseUrls.check(prefix + "base-url", endpoint.getBaseUrl(), endpoint.getProtocol());
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
		ProtocolOptions options = options(factory, prefix, endpoint, chatModelBean, baseUrl);
		PropertyLayers layers = new PropertyLayers(prefix, endpoint, this.properties.getDefaults());
		// a disabled endpoint is never called: its key may stay unset
		ApiKey apiKey = ApiKey.of(endpoint.isEnabled() ? LlmConfigurationException.resolved(prefix + "api-key", endpoint.getApiKey())
				: endpoint.getApiKey());
		try {
			return new EndpointSettings(name,
					new EndpointSettings.Upstream(baseUrl, apiKey, endpoint.getProtocol(), model.trim(),
							HeaderRules.check(prefix + "headers", endpoint.getHeaders(), apiKey.isPresent()),
							rateLimits(layers)),
					new EndpointSettings.Routing(endpoint.getPriority(), endpoint.getRegion(), endpoint.isEnabled(),
							price(prefix, endpoint.getPrice())),
					timeouts(layers), limits(layers), circuitBreaker(layers), retry(layers), bulkhead(layers), liveness(layers),
					options);
		}
		catch (InvalidSettingException ex) {
			// a rule of the settings records (e.g. minimum-number-of-calls <= sliding-window-size)
			throw layers.invalid(ex);
		}
	}

	/**
	 * The protocol-specific keys the endpoint set, as its protocol's factory checks and keeps them.
	 * Two have a default ({@code anthropic-version}, {@code api-version}): they are left out only
	 * when set blank, which the protocols that read them refuse as empty.
	 */
	private static ProtocolOptions options(LlmClientFactory factory, String prefix, EndpointProperties endpoint,
			@Nullable String chatModelBean, URI baseUrl) {
		Map<String, String> set = new LinkedHashMap<>();
		putIfSet(set, ProtocolOptions.ANTHROPIC_VERSION, endpoint.getAnthropicVersion());
		putIfSet(set, ProtocolOptions.DEPLOYMENT, endpoint.getDeployment());
		putIfSet(set, ProtocolOptions.API_VERSION, endpoint.getApiVersion());
		putIfSet(set, ProtocolOptions.CHAT_MODEL_BEAN, chatModelBean);
		try {
			return factory.options(new ProtocolOptions(set), prefix, baseUrl);
		}
		catch (InvalidOptionException ex) {
			throw new LlmConfigurationException(ex.property(), ex.problem(), ex.action());
		}
	}

	private static void putIfSet(Map<String, String> options, String key, @Nullable String value) {
		if (value != null && !value.isBlank()) {
			options.put(key, value.trim());
		}
	}

	// Boot splits an unbracketed map key at its dots: an endpoint named after a model such as
	// gpt-4.1 only binds as llm.endpoints[gpt-4.1], so that is how messages must name it.
	static String property(String endpoint) {
		return endpoint.contains(".") ? "llm.endpoints[" + endpoint + "]" : "llm.endpoints." + endpoint;
	}

	private static EndpointSettings.Timeouts timeouts(PropertyLayers layers) {
		return new EndpointSettings.Timeouts(layers.positive("timeout", ResilienceProperties::getTimeout),
				layers.positive("connect-timeout", ResilienceProperties::getConnectTimeout),
				layers.positive("first-token-timeout", ResilienceProperties::getFirstTokenTimeout),
				layers.positive("stream-idle-timeout", ResilienceProperties::getStreamIdleTimeout),
				layers.value("upstream-streaming", ResilienceProperties::getUpstreamStreaming));
	}

	private static Limits limits(PropertyLayers layers) {
		return new Limits(layers.size("max-response-size", ResilienceProperties::getMaxResponseSize),
				layers.size("max-stream-size", ResilienceProperties::getMaxStreamSize),
				layers.atLeast("max-stream-events", ResilienceProperties::getMaxStreamEvents, 1L));
	}

	private static EndpointSettings.CircuitBreakerSettings circuitBreaker(PropertyLayers layers) {
		int window = layers.atLeast("circuit-breaker.sliding-window-size", (p) -> p.getCircuitBreaker().getSlidingWindowSize(), 1);
		Function<ResilienceProperties, @Nullable Integer> minimum = (p) -> p.getCircuitBreaker().getMinimumNumberOfCalls();
		// Unset, it follows a smaller window down, so that setting only the window is enough.
		int calls = layers.isSet(minimum::apply) ? layers.value("circuit-breaker.minimum-number-of-calls", minimum)
				: Math.min(layers.builtIn(minimum), window);
		return new EndpointSettings.CircuitBreakerSettings(window,
				layers.atLeast("circuit-breaker.minimum-number-of-calls", minimum, calls, 1),
				layers.percent("circuit-breaker.failure-rate-threshold", (p) -> p.getCircuitBreaker().getFailureRateThreshold()),
				layers.positive("circuit-breaker.wait-duration-in-open-state", (p) -> p.getCircuitBreaker().getWaitDurationInOpenState()),
				layers.atLeast("circuit-breaker.permitted-calls-in-half-open-state", (p) -> p.getCircuitBreaker().getPermittedCallsInHalfOpenState(), 1),
				layers.positive("circuit-breaker.slow-call-duration-threshold", (p) -> p.getCircuitBreaker().getSlowCallDurationThreshold()),
				layers.percent("circuit-breaker.slow-call-rate-threshold", (p) -> p.getCircuitBreaker().getSlowCallRateThreshold()),
				layers.value("circuit-breaker.probe", (p) -> p.getCircuitBreaker().getProbe()),
				layers.notNegative("circuit-breaker.start-order-wait", (p) -> p.getCircuitBreaker().getStartOrderWait()));
	}

	private static EndpointSettings.RetrySettings retry(PropertyLayers layers) {
		return new EndpointSettings.RetrySettings(layers.atLeast("retry.max-attempts", (p) -> p.getRetry().getMaxAttempts(), 1),
				layers.positive("retry.initial-backoff", (p) -> p.getRetry().getInitialBackoff()),
				layers.value("retry.multiplier", (p) -> p.getRetry().getMultiplier()),
				layers.positive("retry.max-backoff", (p) -> p.getRetry().getMaxBackoff()),
				layers.value("retry.jitter", (p) -> p.getRetry().getJitter()),
				layers.notNegative("retry.max-retry-after", (p) -> p.getRetry().getMaxRetryAfter()),
				layers.value("retry.budget", (p) -> p.getRetry().getBudget()),
				layers.value("retry.budget-min-per-second", (p) -> p.getRetry().getBudgetMinPerSecond()));
	}

	private static EndpointSettings.RateLimits rateLimits(PropertyLayers layers) {
		return new EndpointSettings.RateLimits(
				layers.atLeast("rate-limits.requests-per-minute", (p) -> p.getRateLimits().getRequestsPerMinute(), 0L),
				layers.atLeast("rate-limits.tokens-per-minute", (p) -> p.getRateLimits().getTokensPerMinute(), 0L));
	}

	private static EndpointSettings.BulkheadSettings bulkhead(PropertyLayers layers) {
		return new EndpointSettings.BulkheadSettings(
				layers.atLeast("bulkhead.max-concurrent-calls", (p) -> p.getBulkhead().getMaxConcurrentCalls(), 1),
				layers.notNegative("bulkhead.max-wait", (p) -> p.getBulkhead().getMaxWait()),
				layers.notNegative("bulkhead.released-calls-wait", (p) -> p.getBulkhead().getReleasedCallsWait()));
	}

	private static EndpointSettings.Liveness liveness(PropertyLayers layers) {
		return new EndpointSettings.Liveness(
				layers.value("liveness.hang-detection.enabled", (p) -> p.getLiveness().getHangDetection().getEnabled()),
				layers.value("liveness.hang-detection.p99-multiple", (p) -> p.getLiveness().getHangDetection().getP99Multiple()),
				layers.positive("liveness.hang-detection.floor", (p) -> p.getLiveness().getHangDetection().getFloor()),
				layers.atLeast("liveness.hang-detection.min-waiting-calls", (p) -> p.getLiveness().getHangDetection().getMinWaitingCalls(), 1),
				layers.positive("liveness.probe-floor", (p) -> p.getLiveness().getProbeFloor()));
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
