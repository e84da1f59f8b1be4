package dev.llmresilience.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.llmresilience.protocol.anthropic.AnthropicClientFactory;
import dev.llmresilience.protocol.openai.AzureOpenAiClientFactory;
import org.jspecify.annotations.Nullable;

/**
 * One model endpoint, {@code llm.endpoints.<name>}: where it is, which model it serves, and, for
 * any resilience key, an override of {@code llm.defaults}. Each endpoint is one circuit-breaker
 * bucket; to give a model in two regions two buckets, configure two endpoints.
 */
public class EndpointProperties extends ResilienceProperties {

	/**
	 * Base URL of the API, up to and including the version: e.g. https://api.openai.com/v1 (protocol
	 * openai), https://api.anthropic.com/v1 (anthropic), or the resource's endpoint
	 * https://my-resource.openai.azure.com (azure-openai). Required, except with protocol spring-ai.
	 */
	private @Nullable String baseUrl;

	/**
	 * API key, sent as "Authorization: Bearer" (protocol openai), "x-api-key" (anthropic) or
	 * "api-key" (azure-openai). Leave empty for servers that need none (Ollama, vLLM). Never logged
	 * or shown.
	 */
	private @Nullable String apiKey;

	/**
	 * Whether the endpoint needs an api-key. Set it to false for a server that needs none (Ollama,
	 * vLLM, a local model): an endpoint that needs one but has none is reported at start-up with a
	 * WARN.
	 */
	private boolean apiKeyRequired = true;

	/**
	 * Model name sent in each request, e.g. gpt-4o or claude-sonnet-4-5. Required. With protocol
	 * azure-openai the deployment decides the model, and this names it in metrics and answers.
	 */
	private @Nullable String model;

	/**
	 * Wire protocol: "openai" (any OpenAI-compatible chat-completions API), "openai-responses"
	 * (OpenAI's Responses API, POST {base-url}/responses), "anthropic" (Anthropic's Messages API),
	 * "azure-openai" (Azure OpenAI's deployment API) or, with Spring AI on the class
	 * path, "spring-ai" (a Spring AI ChatModel bean, see chat-model-bean); a bean of type
	 * LlmClientFactory adds another.
	 */
	private String protocol = "openai";

	/**
	 * The name of the Spring AI ChatModel bean that serves the endpoint, e.g. anthropicChatModel.
	 * Required with protocol spring-ai, and only used by it. Its own retries are switched off: this
	 * endpoint's retry decides.
	 */
	private @Nullable String chatModelBean;

	/** The anthropic-version header sent with each request of protocol anthropic. Default 2023-06-01. */
	private String anthropicVersion = AnthropicClientFactory.DEFAULT_VERSION;

	/**
	 * The name of the model deployment in the Azure OpenAI resource, sent in the request path.
	 * Required with protocol azure-openai, and only used by it.
	 */
	private @Nullable String deployment;

	/**
	 * The api-version query parameter of protocol azure-openai, e.g. 2025-01-01-preview. Default
	 * 2024-10-21, the latest GA version. Streamed answers carry their usage (and cost) from 2024-09-01 on.
	 */
	private String apiVersion = AzureOpenAiClientFactory.DEFAULT_API_VERSION;

	/**
	 * Order within the default route: lower is tried first. In a route with balance=weighted or
	 * least-latency, consecutive endpoints of equal priority share the load.
	 */
	private int priority = 0;

	/**
	 * Share of the calls of a route with balance=weighted, relative to the other endpoints of equal
	 * priority in it: with weights 3 and 1, three calls in four go to the first. Must be positive.
	 * Default 1.
	 */
	private double weight = 1;

	/** A free-form label (e.g. "us", "eu") shown in the actuator output and metrics. */
	private @Nullable String region;

	/** Whether the endpoint takes part in routes; a disabled endpoint is skipped. */
	private boolean enabled = true;

	/** Extra request headers, e.g. OpenAI-Organization. Their values are never logged or shown. */
	private Map<String, String> headers = new LinkedHashMap<>();

	/** Price of the model's tokens, to compute each response's cost. Optional. */
	private final Price price = new Price();

	public @Nullable String getBaseUrl() {
		return this.baseUrl;
	}

	public void setBaseUrl(@Nullable String baseUrl) {
		this.baseUrl = baseUrl;
	}

	public @Nullable String getApiKey() {
		return this.apiKey;
	}

	public void setApiKey(@Nullable String apiKey) {
		this.apiKey = apiKey;
	}

	public boolean isApiKeyRequired() {
		return this.apiKeyRequired;
	}

	public void setApiKeyRequired(boolean apiKeyRequired) {
		this.apiKeyRequired = apiKeyRequired;
	}

	public @Nullable String getModel() {
		return this.model;
	}

	public void setModel(@Nullable String model) {
		this.model = model;
	}

	public String getProtocol() {
		return this.protocol;
	}

	public void setProtocol(String protocol) {
		this.protocol = protocol;
	}

	public @Nullable String getChatModelBean() {
		return this.chatModelBean;
	}

	public void setChatModelBean(@Nullable String chatModelBean) {
		this.chatModelBean = chatModelBean;
	}

	public String getAnthropicVersion() {
		return this.anthropicVersion;
	}

	public void setAnthropicVersion(String anthropicVersion) {
		this.anthropicVersion = anthropicVersion;
	}

	public @Nullable String getDeployment() {
		return this.deployment;
	}

	public void setDeployment(@Nullable String deployment) {
		this.deployment = deployment;
	}

	public String getApiVersion() {
		return this.apiVersion;
	}

	public void setApiVersion(String apiVersion) {
		this.apiVersion = apiVersion;
	}

	public int getPriority() {
		return this.priority;
	}

	public void setPriority(int priority) {
		this.priority = priority;
	}

	public double getWeight() {
		return this.weight;
	}

	public void setWeight(double weight) {
		this.weight = weight;
	}

	public @Nullable String getRegion() {
		return this.region;
	}

	public void setRegion(@Nullable String region) {
		this.region = region;
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Map<String, String> getHeaders() {
		return this.headers;
	}

	public void setHeaders(Map<String, String> headers) {
		this.headers = headers;
	}

	public Price getPrice() {
		return this.price;
	}

	/** Token prices, in any currency, per million tokens. */
	public static class Price {

		/** Price of one million prompt (input) tokens. */
		private @Nullable Double inputPerMillion;

		/** Price of one million completion (output) tokens. */
		private @Nullable Double outputPerMillion;

		public @Nullable Double getInputPerMillion() {
			return this.inputPerMillion;
		}

		public void setInputPerMillion(@Nullable Double inputPerMillion) {
			this.inputPerMillion = inputPerMillion;
		}

		public @Nullable Double getOutputPerMillion() {
			return this.outputPerMillion;
		}

		public void setOutputPerMillion(@Nullable Double outputPerMillion) {
			this.outputPerMillion = outputPerMillion;
		}

	}

}
