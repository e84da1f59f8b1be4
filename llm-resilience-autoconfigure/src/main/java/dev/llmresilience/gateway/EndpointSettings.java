package dev.llmresilience.gateway;

import java.math.BigDecimal;
import java.math.MathContext;
import java.net.URI;
import java.time.Duration;
import java.util.Map;

import dev.llmresilience.chat.Usage;
import dev.llmresilience.protocol.ApiKey;
import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.ClientSettings.Limits;
import dev.llmresilience.protocol.ClientSettings.ProtocolOptions;
import org.jspecify.annotations.Nullable;

/**
 * The resolved, validated settings of one endpoint: its own values over {@code llm.defaults} over
 * the built-in defaults, one record per concern. Its {@link #toString()} shows no key and no header
 * value. Built by the auto-configuration from {@code llm.endpoints.<name>}; {@link #builder} builds
 * one from the built-in defaults.
 *
 * @param name the endpoint's name (its circuit-breaker bucket)
 * @param upstream what the endpoint calls, and how
 * @param routing how routes treat the endpoint
 * @param timeouts how long an attempt may take, and its parts
 * @param limits the most a response or a stream may send
 * @param circuitBreaker the breaker's settings
 * @param retry the retry's settings
 * @param bulkhead the bulkhead's settings
 * @param liveness how a hang is told from the endpoint's own first-token times
 * @param options the options of the endpoint's protocol, as its factory kept them
 */
public record EndpointSettings(String name, Upstream upstream, Routing routing, Timeouts timeouts, Limits limits,
		CircuitBreakerSettings circuitBreaker, RetrySettings retry, BulkheadSettings bulkhead, Liveness liveness,
		ProtocolOptions options) {

	/**
	 * Settings of the built-in defaults, for an endpoint of protocol {@code openai} with no key; the
	 * builder's methods set the rest.
	 * @param name the endpoint's name (its circuit-breaker bucket)
	 * @param baseUrl the API's base URL
	 * @param model the model name
	 * @return the builder
	 */
	public static Builder builder(String name, URI baseUrl, String model) {
		return new Builder(name, baseUrl, model);
	}

	/**
	 * A builder that starts from these settings.
	 * @return the builder
	 */
	public Builder toBuilder() {
		return new Builder(this);
	}

	/**
	 * What the endpoint's protocol client needs of these settings.
	 * @return the client's settings
	 */
	public ClientSettings client() {
		Upstream up = this.upstream;
		return new ClientSettings(this.name, up.baseUrl(), up.apiKey(), up.model(), up.headers(),
				this.timeouts.connectTimeout(), this.bulkhead.maxConcurrentCalls(), this.limits, this.options);
	}

	/**
	 * The provider's name as OpenTelemetry's GenAI conventions spell it ({@code gen_ai.provider.name}),
	 * guessed from the base URL's host, else from the protocol ({@code anthropic},
	 * {@code azure-openai}); the protocol's name for a host that is not known.
	 * @return the provider's name
	 */
	public String providerName() {
		return ProviderNames.of(this.upstream.baseUrl(), this.upstream.protocol());
	}

	@Override
	public String toString() {
		return "EndpointSettings[name=" + this.name + ", baseUrl=" + this.upstream.baseUrl() + ", model="
				+ this.upstream.model() + ", region=" + this.routing.region() + ", priority=" + this.routing.priority()
				+ ", headers=" + this.upstream.headers().keySet() + "]";
	}

	/**
	 * What an endpoint calls, and how: where, with which key, in which protocol, for which model.
	 * Its {@link #toString()} shows no key and no header value.
	 *
	 * @param baseUrl the API's base URL
	 * @param apiKey the key
	 * @param protocol the wire protocol, as {@code llm.endpoints.<name>.protocol} names it
	 * @param model the model name
	 * @param headers extra request headers
	 * @param rateLimits the provider's limits on the key, as configured (a provider's limit is per key)
	 */
	public record Upstream(URI baseUrl, ApiKey apiKey, String protocol, String model, Map<String, String> headers,
			RateLimits rateLimits) {

		public Upstream {
			headers = Map.copyOf(headers);
		}

		/**
		 * What an endpoint calls, with no configured rate limit.
		 * @param baseUrl the API's base URL
		 * @param apiKey the key
		 * @param protocol the wire protocol
		 * @param model the model name
		 * @param headers extra request headers
		 */
		public Upstream(URI baseUrl, ApiKey apiKey, String protocol, String model, Map<String, String> headers) {
			this(baseUrl, apiKey, protocol, model, headers, RateLimits.DEFAULT);
		}

		@Override
		public String toString() {
			return "Upstream[baseUrl=" + this.baseUrl + ", protocol=" + this.protocol + ", model=" + this.model
					+ ", headers=" + this.headers.keySet() + "]";
		}

	}

	/**
	 * The rate limits the provider puts on the endpoint's key, as configured; what the provider
	 * announces in its response headers is learned on top of them. Counted per replica.
	 *
	 * @param requestsPerMinute requests a minute, or 0 when not known
	 * @param tokensPerMinute tokens (prompt and completion) a minute, or 0 when not known
	 */
	public record RateLimits(long requestsPerMinute, long tokensPerMinute) {

		/** The built-in rate limits: none known (0 and 0). */
		public static final RateLimits DEFAULT = new RateLimits(0, 0);

		/**
		 * @throws InvalidSettingException when a limit is negative
		 */
		public RateLimits {
			if (requestsPerMinute < 0) {
				throw new InvalidSettingException("rate-limits.requests-per-minute", "is " + requestsPerMinute
						+ ", a negative limit", "Give the provider's requests per minute, or 0 when it is not known.");
			}
			if (tokensPerMinute < 0) {
				throw new InvalidSettingException("rate-limits.tokens-per-minute", "is " + tokensPerMinute
						+ ", a negative limit", "Give the provider's tokens per minute, or 0 when it is not known.");
			}
		}

		/**
		 * Whether any limit is configured.
		 * @return true when one is
		 */
		public boolean known() {
			return this.requestsPerMinute > 0 || this.tokensPerMinute > 0;
		}

	}

	/**
	 * How routes treat an endpoint.
	 *
	 * @param priority lower is tried first in the default route
	 * @param region a label, or {@code null}
	 * @param enabled whether the endpoint takes part in routes
	 * @param price token prices, or {@code null}; a route ordered cheapest-first and the daily budget
	 * need them
	 */
	public record Routing(int priority, @Nullable String region, boolean enabled, @Nullable Price price) {

		/** Priority 0, no region, enabled, no price. */
		public static final Routing DEFAULT = new Routing(0, null, true, null);

	}

	/**
	 * How long an attempt may take, and its parts.
	 *
	 * @param timeout per-attempt timeout
	 * @param connectTimeout TCP connect timeout
	 * @param firstTokenTimeout time from the request to the first content chunk, for every call that
	 * goes upstream as a stream (chat included, with {@code upstreamStreaming})
	 * @param streamIdleTimeout longest silence between chunks once tokens flow
	 * @param upstreamStreaming send {@code chat} calls upstream as streams and assemble the answer, so
	 * that the first-token and idle timeouts bound them too
	 */
	public record Timeouts(Duration timeout, Duration connectTimeout, Duration firstTokenTimeout,
			Duration streamIdleTimeout, boolean upstreamStreaming) {

		/**
		 * The built-in timeouts: {@code timeout} 60s, {@code connect-timeout} 5s,
		 * {@code first-token-timeout} 10s, {@code stream-idle-timeout} 30s, {@code upstream-streaming}
		 * true.
		 */
		public static final Timeouts DEFAULT = new Timeouts(Duration.ofSeconds(60), Duration.ofSeconds(5),
				Duration.ofSeconds(10), Duration.ofSeconds(30), true);

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
	 * @param startOrderWait how long a closed breaker holds an attempt's outcome after its end, for the
	 * attempts started before it to end first, so that its window holds calls in the order they
	 * started; zero records each outcome as it ends
	 */
	public record CircuitBreakerSettings(int slidingWindowSize, int minimumNumberOfCalls, float failureRateThreshold,
			Duration waitDurationInOpenState, int permittedCallsInHalfOpenState, Duration slowCallDurationThreshold,
			float slowCallRateThreshold, Probe probe, Duration startOrderWait) {

		/** How long a closed breaker holds an outcome by default, for the attempts started before it: 5s. */
		public static final Duration DEFAULT_START_ORDER_WAIT = Duration.ofSeconds(5);

		/**
		 * The built-in breaker: a window of 20 calls, 20 before the rate is computed, open at 50 %
		 * failures, 30s open before probing, 3 probes, slow after 60s, open at 100 % slow calls,
		 * synthetic probes, outcomes in start order (held up to 5s).
		 */
		public static final CircuitBreakerSettings DEFAULT = new CircuitBreakerSettings(20, 20, 50f,
				Duration.ofSeconds(30), 3, Duration.ofSeconds(60), 100f, Probe.SYNTHETIC, DEFAULT_START_ORDER_WAIT);

		/**
		 * @throws InvalidSettingException when the window could never hold the minimum number of calls
		 */
		public CircuitBreakerSettings {
			if (startOrderWait.isNegative()) {
				throw new InvalidSettingException("circuit-breaker.start-order-wait", "is " + startOrderWait + ", negative",
						"Use 0ms (each outcome recorded as it ends) or a positive duration.");
			}
			if (minimumNumberOfCalls > slidingWindowSize) {
				throw new InvalidSettingException("circuit-breaker.minimum-number-of-calls", "is " + minimumNumberOfCalls
						+ ", more than the sliding window of " + slidingWindowSize + " calls can ever hold",
						"Set it to at most circuit-breaker.sliding-window-size (" + slidingWindowSize
								+ "), or enlarge the window.");
			}
		}

		/**
		 * Settings whose outcomes are held in start order for the default
		 * {@link #DEFAULT_START_ORDER_WAIT}.
		 * @param slidingWindowSize calls in the count-based window
		 * @param minimumNumberOfCalls calls before the rate is computed
		 * @param failureRateThreshold percent at which it opens
		 * @param waitDurationInOpenState time open before probing
		 * @param permittedCallsInHalfOpenState number of probes
		 * @param slowCallDurationThreshold duration of a slow call
		 * @param slowCallRateThreshold percent of slow calls at which it opens
		 * @param probe who sends the half-open probes
		 */
		public CircuitBreakerSettings(int slidingWindowSize, int minimumNumberOfCalls, float failureRateThreshold,
				Duration waitDurationInOpenState, int permittedCallsInHalfOpenState, Duration slowCallDurationThreshold,
				float slowCallRateThreshold, Probe probe) {
			this(slidingWindowSize, minimumNumberOfCalls, failureRateThreshold, waitDurationInOpenState,
					permittedCallsInHalfOpenState, slowCallDurationThreshold, slowCallRateThreshold, probe,
					DEFAULT_START_ORDER_WAIT);
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
	 * @param budget retries as a percentage of the endpoint's calls over the last minute
	 * @param budgetMinPerSecond retries a second allowed beyond the budget, so that low traffic still
	 * retries
	 */
	public record RetrySettings(int maxAttempts, Duration initialBackoff, double multiplier, Duration maxBackoff,
			double jitter, Duration maxRetryAfter, float budget, int budgetMinPerSecond) {

		/** The built-in {@code budget}: retries at most 20 % of the calls. */
		public static final float DEFAULT_BUDGET = 20f;

		/** The built-in {@code budget-min-per-second}: 3 retries a second beyond the budget. */
		public static final int DEFAULT_BUDGET_MIN_PER_SECOND = 3;

		/**
		 * The built-in retry: 3 attempts, waits from 500ms doubling up to 8s with a jitter of 0.25, a
		 * Retry-After waited for up to 10s, retries at most 20 % of the calls plus 3 a second.
		 */
		public static final RetrySettings DEFAULT = new RetrySettings(3, Duration.ofMillis(500), 2.0,
				Duration.ofSeconds(8), 0.25, Duration.ofSeconds(10));

		/**
		 * Retry settings with the built-in budget.
		 * @param maxAttempts attempts in all
		 * @param initialBackoff first wait
		 * @param multiplier growth of the wait
		 * @param maxBackoff cap of the wait
		 * @param jitter random spread, as a fraction
		 * @param maxRetryAfter longest Retry-After waited for
		 */
		public RetrySettings(int maxAttempts, Duration initialBackoff, double multiplier, Duration maxBackoff,
				double jitter, Duration maxRetryAfter) {
			this(maxAttempts, initialBackoff, multiplier, maxBackoff, jitter, maxRetryAfter, DEFAULT_BUDGET,
					DEFAULT_BUDGET_MIN_PER_SECOND);
		}

		/**
		 * @throws InvalidSettingException when the backoff would shrink, the jitter is not a fraction
		 * or the budget is not a percentage
		 */
		public RetrySettings {
			if (budget < 0 || budget > 100) {
				throw new InvalidSettingException("retry.budget", "is " + budget + ", outside [0, 100]",
						"Give a percentage of the endpoint's calls, e.g. 20; 0 leaves only budget-min-per-second.");
			}
			if (budgetMinPerSecond < 0) {
				throw new InvalidSettingException("retry.budget-min-per-second", "is " + budgetMinPerSecond
						+ ", less than 0", "Use 0 or more retries a second, e.g. 3.");
			}
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
		 * These settings with another retry budget.
		 * @param budget retries as a percentage of the calls over the last minute
		 * @param budgetMinPerSecond retries a second allowed beyond it
		 * @return the settings
		 */
		public RetrySettings withBudget(float budget, int budgetMinPerSecond) {
			return new RetrySettings(this.maxAttempts, this.initialBackoff, this.multiplier, this.maxBackoff,
					this.jitter, this.maxRetryAfter, budget, budgetMinPerSecond);
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
	 * @param releasedCallsWait how long a call that another endpoint's opening breaker released to
	 * this one may wait for a free slot, holding no thread, within its deadline
	 */
	public record BulkheadSettings(int maxConcurrentCalls, Duration maxWait, Duration releasedCallsWait) {

		/**
		 * The built-in bulkhead: 50 calls at once, no wait for a permit, released calls waiting up to
		 * 2s for a slot.
		 */
		public static final BulkheadSettings DEFAULT = new BulkheadSettings(50, Duration.ZERO, Duration.ofSeconds(2));

		/**
		 * A bulkhead whose released calls wait as long as the built-in one's.
		 * @param maxConcurrentCalls calls in flight at once
		 * @param maxWait wait for a permit
		 */
		public BulkheadSettings(int maxConcurrentCalls, Duration maxWait) {
			this(maxConcurrentCalls, maxWait, Duration.ofSeconds(2));
		}

	}

	/**
	 * How a hang is told from the endpoint's own history (docs/liveness.md): its recent first-token
	 * times give a threshold, {@code p99Multiple} times their 99th percentile, at least
	 * {@code hangFloor}; the endpoint is hung when at least {@code minWaitingCalls} calls wait for
	 * their first token, the oldest for longer than the threshold, and no call has had a first token
	 * for as long. A synthetic probe's first token is bounded the same way, at least
	 * {@code probeFloor}; both are at most {@code first-token-timeout}.
	 *
	 * @param hangDetection whether the breaker opens on that evidence
	 * @param p99Multiple how many times the 99th percentile of the recent first-token times a wait
	 * must last to count as evidence
	 * @param hangFloor the shortest threshold
	 * @param minWaitingCalls the fewest calls waiting at once that are evidence
	 * @param probeFloor the shortest first-token bound of a synthetic probe
	 */
	public record Liveness(boolean hangDetection, double p99Multiple, Duration hangFloor, int minWaitingCalls,
			Duration probeFloor) {

		/**
		 * The built-in rule: on, 3 times the p99, at least 2s, 5 calls waiting; probes bounded at
		 * least 3s.
		 */
		public static final Liveness DEFAULT = new Liveness(true, 3.0, Duration.ofSeconds(2), 5, Duration.ofSeconds(3));

		/**
		 * @throws InvalidSettingException when the multiple would take a normal first token for a hang
		 */
		public Liveness {
			if (!(p99Multiple >= 1.0) || Double.isInfinite(p99Multiple)) {
				throw new InvalidSettingException("liveness.hang-detection.p99-multiple", "is " + p99Multiple
						+ ", not a finite number of at least 1",
						"Use 1 or more, e.g. 3: a wait of 3 times the 99th percentile of the recent first tokens is evidence of a hang.");
			}
		}

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

	/**
	 * Builds {@link EndpointSettings}, each setting its built-in default until set; for tests,
	 * benchmarks and applications that make endpoints without {@code llm.endpoints}.
	 */
	public static final class Builder {

		private final String name;

		private final URI baseUrl;

		private final String model;

		private ApiKey apiKey = ApiKey.of(null);

		private String protocol = "openai";

		private Map<String, String> headers = Map.of();

		private RateLimits rateLimits = RateLimits.DEFAULT;

		private Routing routing = Routing.DEFAULT;

		private Timeouts timeouts = Timeouts.DEFAULT;

		private Limits limits = Limits.DEFAULT;

		private CircuitBreakerSettings circuitBreaker = CircuitBreakerSettings.DEFAULT;

		private RetrySettings retry = RetrySettings.DEFAULT;

		private BulkheadSettings bulkhead = BulkheadSettings.DEFAULT;

		private Liveness liveness = Liveness.DEFAULT;

		private ProtocolOptions options = ProtocolOptions.NONE;

		private Builder(String name, URI baseUrl, String model) {
			this.name = name;
			this.baseUrl = baseUrl;
			this.model = model;
		}

		private Builder(EndpointSettings settings) {
			this(settings.name, settings.upstream.baseUrl(), settings.upstream.model());
			this.apiKey = settings.upstream.apiKey();
			this.protocol = settings.upstream.protocol();
			this.headers = settings.upstream.headers();
			this.rateLimits = settings.upstream.rateLimits();
			this.routing = settings.routing;
			this.timeouts = settings.timeouts;
			this.limits = settings.limits;
			this.circuitBreaker = settings.circuitBreaker;
			this.retry = settings.retry;
			this.bulkhead = settings.bulkhead;
			this.liveness = settings.liveness;
			this.options = settings.options;
		}

		/**
		 * The key, none by default.
		 * @param apiKey the key
		 * @return this builder
		 */
		public Builder apiKey(ApiKey apiKey) {
			this.apiKey = apiKey;
			return this;
		}

		/**
		 * The wire protocol, {@code openai} by default.
		 * @param protocol the protocol's name
		 * @return this builder
		 */
		public Builder protocol(String protocol) {
			this.protocol = protocol;
			return this;
		}

		/**
		 * Extra request headers, none by default.
		 * @param headers the headers
		 * @return this builder
		 */
		public Builder headers(Map<String, String> headers) {
			this.headers = headers;
			return this;
		}

		/**
		 * The configured rate limits, {@link RateLimits#DEFAULT} (none) by default.
		 * @param rateLimits the limits
		 * @return this builder
		 */
		public Builder rateLimits(RateLimits rateLimits) {
			this.rateLimits = rateLimits;
			return this;
		}

		/**
		 * How routes treat the endpoint, {@link Routing#DEFAULT} by default.
		 * @param routing the routing
		 * @return this builder
		 */
		public Builder routing(Routing routing) {
			this.routing = routing;
			return this;
		}

		/**
		 * The timeouts, {@link Timeouts#DEFAULT} by default.
		 * @param timeouts the timeouts
		 * @return this builder
		 */
		public Builder timeouts(Timeouts timeouts) {
			this.timeouts = timeouts;
			return this;
		}

		/**
		 * The limits, {@link Limits#DEFAULT} by default.
		 * @param limits the limits
		 * @return this builder
		 */
		public Builder limits(Limits limits) {
			this.limits = limits;
			return this;
		}

		/**
		 * The breaker's settings, {@link CircuitBreakerSettings#DEFAULT} by default.
		 * @param circuitBreaker the settings
		 * @return this builder
		 */
		public Builder circuitBreaker(CircuitBreakerSettings circuitBreaker) {
			this.circuitBreaker = circuitBreaker;
			return this;
		}

		/**
		 * The retry's settings, {@link RetrySettings#DEFAULT} by default.
		 * @param retry the settings
		 * @return this builder
		 */
		public Builder retry(RetrySettings retry) {
			this.retry = retry;
			return this;
		}

		/**
		 * The bulkhead's settings, {@link BulkheadSettings#DEFAULT} by default.
		 * @param bulkhead the settings
		 * @return this builder
		 */
		public Builder bulkhead(BulkheadSettings bulkhead) {
			this.bulkhead = bulkhead;
			return this;
		}

		/**
		 * How a hang is told, {@link Liveness#DEFAULT} by default.
		 * @param liveness the settings
		 * @return this builder
		 */
		public Builder liveness(Liveness liveness) {
			this.liveness = liveness;
			return this;
		}

		/**
		 * The protocol's options, none by default.
		 * @param options the options, as the protocol's factory would keep them
		 * @return this builder
		 */
		public Builder options(ProtocolOptions options) {
			this.options = options;
			return this;
		}

		/**
		 * The settings.
		 * @return the settings
		 */
		public EndpointSettings build() {
			return new EndpointSettings(this.name,
					new Upstream(this.baseUrl, this.apiKey, this.protocol, this.model, this.headers, this.rateLimits),
					this.routing, this.timeouts, this.limits, this.circuitBreaker, this.retry, this.bulkhead,
					this.liveness, this.options);
		}

	}

}
