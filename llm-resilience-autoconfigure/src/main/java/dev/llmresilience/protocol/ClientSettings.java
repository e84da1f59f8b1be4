package dev.llmresilience.protocol;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * What a protocol client needs to know of its endpoint: where and how to connect, what to ask for,
 * how much it may read, and the options of its protocol. Its {@link #toString()} shows no key and no
 * header value.
 *
 * @param name the endpoint's name, for messages
 * @param baseUrl the API's base URL
 * @param apiKey the key
 * @param model the model name sent with each request
 * @param headers extra request headers
 * @param connectTimeout TCP connect timeout
 * @param maxConnections connections in the endpoint's pool
 * @param limits the most a response or a stream may send
 * @param options the options of the endpoint's protocol, as its factory kept them
 * ({@link LlmClientFactory#options})
 * @param rateLimits told what the provider says of its rate limits on each answer, 429s included
 * ({@link UpstreamFailures#rateLimits}); {@link RateLimitListener#NONE} when nothing listens
 */
public record ClientSettings(String name, URI baseUrl, ApiKey apiKey, String model, Map<String, String> headers,
		Duration connectTimeout, int maxConnections, Limits limits, ProtocolOptions options,
		RateLimitListener rateLimits) {

	private static final int SHORTEST_SECRET = 8;

	public ClientSettings {
		headers = Map.copyOf(headers);
	}

	/**
	 * Settings whose client tells no one of the provider's rate limits.
	 * @param name the endpoint's name, for messages
	 * @param baseUrl the API's base URL
	 * @param apiKey the key
	 * @param model the model name sent with each request
	 * @param headers extra request headers
	 * @param connectTimeout TCP connect timeout
	 * @param maxConnections connections in the endpoint's pool
	 * @param limits the most a response or a stream may send
	 * @param options the options of the endpoint's protocol
	 */
	public ClientSettings(String name, URI baseUrl, ApiKey apiKey, String model, Map<String, String> headers,
			Duration connectTimeout, int maxConnections, Limits limits, ProtocolOptions options) {
		this(name, baseUrl, apiKey, model, headers, connectTimeout, maxConnections, limits, options,
				RateLimitListener.NONE);
	}

	/**
	 * These settings, with another listener of the provider's rate limits.
	 * @param rateLimits the listener
	 * @return the settings
	 */
	public ClientSettings withRateLimits(RateLimitListener rateLimits) {
		return new ClientSettings(this.name, this.baseUrl, this.apiKey, this.model, this.headers, this.connectTimeout,
				this.maxConnections, this.limits, this.options, rateLimits);
	}

	/**
	 * Tell the endpoint's listener what a response's headers say of the provider's rate limits, if
	 * they say anything: every client calls this with the headers of every response it reads, a
	 * 429's included.
	 * @param failures the wire mapping, which reads the headers
	 * @param headers the response's headers
	 */
	public void observeRateLimits(UpstreamFailures failures, HttpHeaders headers) {
		if (this.rateLimits == RateLimitListener.NONE) {
			return;
		}
		ProviderLimits limits = failures.rateLimits(this.name, headers);
		if (limits != null) {
			this.rateLimits.limits(limits);
		}
	}

	/**
	 * What a provider's message must not repeat: the key and the header values (an organization or
	 * project id, a beta flag with a token in it). Values shorter than {@value #SHORTEST_SECRET}
	 * characters are no secrets, and redacting them would garble the message (a version such as
	 * {@code v1}).
	 * @return the values to redact from provider messages
	 */
	public List<String> secrets() {
		List<String> secrets = new ArrayList<>();
		if (this.apiKey.reveal() != null) {
			secrets.add(this.apiKey.reveal());
		}
		this.headers.values().stream().filter((value) -> value.length() >= SHORTEST_SECRET).forEach(secrets::add);
		return List.copyOf(secrets);
	}

	@Override
	public String toString() {
		return "ClientSettings[name=" + this.name + ", baseUrl=" + this.baseUrl + ", model=" + this.model + ", headers="
				+ this.headers.keySet() + "]";
	}

	/**
	 * The most one endpoint's responses may send, so that a faulty provider cannot grow memory without
	 * bound ({@link StreamLimits}).
	 *
	 * @param maxResponseSize largest body (or server-sent event) read, in bytes
	 * @param maxStreamSize most bytes one streamed attempt may send in all
	 * @param maxStreamEvents most server-sent events one streamed attempt may send
	 */
	public record Limits(long maxResponseSize, long maxStreamSize, long maxStreamEvents) {

		/** The built-in {@code max-response-size}: 10MB. */
		public static final long DEFAULT_MAX_RESPONSE_SIZE = 10L * 1024 * 1024;

		/** The built-in {@code max-stream-size}: 64MB. */
		public static final long DEFAULT_MAX_STREAM_SIZE = 64L * 1024 * 1024;

		/** The built-in {@code max-stream-events}. */
		public static final long DEFAULT_MAX_STREAM_EVENTS = 200_000;

		/** The built-in limits. */
		public static final Limits DEFAULT = new Limits(DEFAULT_MAX_RESPONSE_SIZE, DEFAULT_MAX_STREAM_SIZE,
				DEFAULT_MAX_STREAM_EVENTS);

		/**
		 * These limits with another largest body.
		 * @param maxResponseSize largest body (or server-sent event) read, in bytes
		 * @return the limits
		 */
		public Limits withMaxResponseSize(long maxResponseSize) {
			return new Limits(maxResponseSize, this.maxStreamSize, this.maxStreamEvents);
		}

	}

	/**
	 * The protocol-specific keys an endpoint set, by their name under {@code llm.endpoints.<name>}
	 * ({@value #ANTHROPIC_VERSION}, {@value #DEPLOYMENT}, {@value #API_VERSION},
	 * {@value #CHAT_MODEL_BEAN}), each trimmed, a key set blank left out. The endpoint's protocol owns
	 * them: its factory checks them and keeps those its client reads ({@link LlmClientFactory#options}),
	 * and its client reads them here.
	 *
	 * @param values the options by key
	 */
	public record ProtocolOptions(Map<String, String> values) {

		/** The {@code anthropic-version} header of protocol {@code anthropic}. */
		public static final String ANTHROPIC_VERSION = "anthropic-version";

		/** The Azure OpenAI deployment of protocol {@code azure-openai}, in the request path. */
		public static final String DEPLOYMENT = "deployment";

		/** The Azure OpenAI {@code api-version} query parameter of protocol {@code azure-openai}. */
		public static final String API_VERSION = "api-version";

		/** The Spring AI {@code ChatModel} bean of protocol {@code spring-ai}. */
		public static final String CHAT_MODEL_BEAN = "chat-model-bean";

		/** No option at all. */
		public static final ProtocolOptions NONE = new ProtocolOptions(Map.of());

		public ProtocolOptions {
			values = Map.copyOf(values);
		}

		/**
		 * One option.
		 * @param key the option's key, e.g. {@value #DEPLOYMENT}
		 * @param value its value
		 * @return the options
		 */
		public static ProtocolOptions of(String key, String value) {
			return new ProtocolOptions(Map.of(key, value));
		}

		/**
		 * The value of an option.
		 * @param key the option's key, e.g. {@value #DEPLOYMENT}
		 * @return its value, or {@code null} when the endpoint did not set it
		 */
		public @Nullable String get(String key) {
			return this.values.get(key);
		}

		/**
		 * Refuse a {@value #DEPLOYMENT} on a protocol that has none: most often an Azure OpenAI
		 * endpoint whose protocol was left at its default.
		 * @param prefix the endpoint's property prefix, with its trailing dot
		 * @param protocol the endpoint's protocol
		 * @throws InvalidOptionException when a deployment is set
		 */
		public void refuseDeployment(String prefix, String protocol) {
			if (this.values.containsKey(DEPLOYMENT)) {
				throw new InvalidOptionException(prefix + DEPLOYMENT, "is set, but the protocol is '" + protocol + "'",
						"Set " + prefix + "protocol=azure-openai to call an Azure OpenAI deployment, or remove "
								+ prefix + DEPLOYMENT + ".");
			}
		}

		@Override
		public String toString() {
			return "ProtocolOptions" + new TreeMap<>(this.values);
		}

	}

	/**
	 * Hears what a provider says of its rate limits, once per response that says anything. Called
	 * on the thread that read the response: it must not block.
	 */
	@FunctionalInterface
	public interface RateLimitListener {

		/** A listener that ignores everything. */
		RateLimitListener NONE = (limits) -> {
		};

		/**
		 * What one response said.
		 * @param limits the limits it announced
		 */
		void limits(ProviderLimits limits);

	}

	/**
	 * What one response said of the provider's rate limits (OpenAI and Azure OpenAI's
	 * {@code x-ratelimit-*}, Anthropic's {@code anthropic-ratelimit-*}), each window {@code null}
	 * when the response said nothing (or nothing readable) of it.
	 *
	 * @param requests requests per window
	 * @param tokens tokens per window (Anthropic: input and output together)
	 * @param inputTokens Anthropic's input tokens per window
	 * @param outputTokens Anthropic's output tokens per window
	 */
	public record ProviderLimits(@Nullable Window requests, @Nullable Window tokens, @Nullable Window inputTokens,
			@Nullable Window outputTokens) {

		/**
		 * One window of a rate limit.
		 *
		 * @param limit the most the window allows, or -1 when not said
		 * @param remaining what is left of it, or -1 when not said
		 * @param reset how long until it is whole again, or {@code null} when not said
		 */
		public record Window(long limit, long remaining, @Nullable Duration reset) {

		}

	}

	/**
	 * A protocol refused an option (or the base URL) of an endpoint at start-up
	 * ({@link LlmClientFactory#options}). Names the property where the value was set, so that the
	 * auto-configuration can report it as a configuration error; never holds a key.
	 */
	public static class InvalidOptionException extends IllegalArgumentException {

		private final String property;

		private final String problem;

		private final String action;

		/**
		 * Create an instance.
		 * @param property the property at fault, e.g. {@code llm.endpoints.azure.deployment}
		 * @param problem what is wrong with its value, e.g. "is missing"
		 * @param action what to do about it
		 */
		public InvalidOptionException(String property, String problem, String action) {
			super(property + ": " + problem + ". " + action);
			this.property = property;
			this.problem = problem;
			this.action = action;
		}

		/**
		 * The property at fault.
		 * @return its name
		 */
		public String property() {
			return this.property;
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
