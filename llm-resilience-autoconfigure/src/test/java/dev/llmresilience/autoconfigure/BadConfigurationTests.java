package dev.llmresilience.autoconfigure;

import dev.llmresilience.engine.LlmAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Bad {@code llm.*} configuration fails start-up with an {@link LlmConfigurationException} naming
 * the property where the bad value was set and what to do, reported by
 * {@link LlmConfigurationFailureAnalyzer}, and never showing the API key or a header value. The
 * packaged sample application is started once with a bad base URL by {@code PackagedJarBadConfigurationIT}
 * in the sample module. Two endpoints with the same {@code priority} are not an error: the default
 * route orders them by name ({@code LlmPropertiesOverrideTests#defaultRouteHoldsTheEnabledEndpointsByPriorityThenName}).
 */
class BadConfigurationTests {

	private static final String API_KEY = "sk-bad-config-secret-4242";

	private static final String HEADER_VALUE = "header-secret-value-77";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class));

	@Test
	void missingBaseUrlIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.second.model=m2", "llm.endpoints.second.api-key=" + API_KEY),
				"llm.endpoints.second.base-url", "is missing",
				"Set it to the provider's OpenAI-compatible base URL, e.g. llm.endpoints.second.base-url=https://api.openai.com/v1.");
	}

	@Test
	void blankBaseUrlIsRejectedAsMissing() {
		assertRejected(withEndpoint("llm.endpoints.main.base-url="), "llm.endpoints.main.base-url", "is missing",
				"llm.endpoints.main.base-url=https://api.openai.com/v1");
	}

	@Test
	void missingModelIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.model= "), "llm.endpoints.main.model", "is missing",
				"Set it to the model name the provider expects, e.g. llm.endpoints.main.model=gpt-4o.");
	}

	@Test
	void ftpBaseUrlIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.base-url=ftp://example.com/v1"), "llm.endpoints.main.base-url",
				"is 'ftp://example.com/v1', which is not an http(s) URL",
				"Use an absolute http:// or https:// URL with a host, e.g. https://api.openai.com/v1.");
	}

	@Test
	void baseUrlThatIsNotAUrlIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.base-url=not a url"), "llm.endpoints.main.base-url",
				"is not a valid URL", "Use an absolute http:// or https:// URL, e.g. https://api.openai.com/v1.");
	}

	@Test
	void baseUrlWithoutSchemeIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.base-url=api.openai.com/v1"), "llm.endpoints.main.base-url",
				"which is not an http(s) URL", "Use an absolute http:// or https:// URL");
	}

	@Test
	void credentialsInTheBaseUrlAreRejectedWithoutBeingShown() {
		assertRejected(withEndpoint("llm.endpoints.main.base-url=https://user:" + API_KEY + "@example.com/v1"),
				"llm.endpoints.main.base-url", "has user info, a query or a fragment",
				"put credentials in api-key or headers");
	}

	@Test
	void credentialsInANonHttpBaseUrlAreNotShown() {
		assertRejected(withEndpoint("llm.endpoints.main.base-url=ftp://user:" + API_KEY + "@example.com/v1?key=" + API_KEY),
				"llm.endpoints.main.base-url", "has user info, a query or a fragment",
				"put credentials in api-key or headers");
	}

	@Test
	void apiKeyLeftAsAnUnresolvedPlaceholderIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.second.base-url=https://api.openai.com/v1", "llm.endpoints.second.model=m2",
				"llm.endpoints.second.api-key=${LLM_TEST_NEVER_SET_KEY}"), "llm.endpoints.second.api-key",
				"is the placeholder ${LLM_TEST_NEVER_SET_KEY}, which nothing resolved", "export LLM_TEST_NEVER_SET_KEY=");
	}

	@Test
	void routeNamingAnUnknownEndpointIsRejected() {
		assertRejected(withEndpoint("llm.routes.cheap=main,nope"), "llm.routes.cheap", "names unknown endpoint 'nope'",
				"Use one of the configured endpoints [main], or configure it under llm.endpoints.nope.");
	}

	@Test
	void emptyRouteIsRejected() {
		assertRejected(withEndpoint("llm.routes.cheap="), "llm.routes.cheap", "is empty",
				"List the endpoints the route tries, in order, e.g. llm.routes.cheap=main, or remove the route.");
	}

	@Test
	void unknownBalancingStrategyIsRejected() {
		assertRejected(withEndpoint("llm.routes.spread.endpoints=main", "llm.routes.spread.balance=fastest"),
				"llm.routes.spread.balance", "is 'fastest', which is not a balancing strategy",
				"Use priority (the route's order, the default), weighted (by each endpoint's weight) or least-latency");
	}

	@Test
	void unknownRouteOrderIsRejected() {
		assertRejected(withEndpoint("llm.routes.default.order=cheapest"), "llm.routes.default.order",
				"is 'cheapest', which is not a route order", "Use priority (as listed, the default) or cheapest-first");
	}

	@Test
	void zeroWeightIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.weight=0"), "llm.endpoints.main.weight",
				"is 0.0, but must be a positive number", "e.g. 3 beside 1 for three calls in four (default 1)");
	}

	@Test
	void negativeWeightIsRejectedEvenOnAPriorityRoute() {
		assertRejected(withEndpoint("llm.endpoints.main.weight=-2"), "llm.endpoints.main.weight",
				"is -2.0, but must be a positive number", "(default 1)");
	}

	@Test
	void objectFormRouteNamingAnUnknownEndpointIsRejected() {
		assertRejected(withEndpoint("llm.routes.spread.endpoints=main,nope", "llm.routes.spread.balance=weighted"),
				"llm.routes.spread.endpoints", "names unknown endpoint 'nope'",
				"Use one of the configured endpoints [main], or configure it under llm.endpoints.nope.");
	}

	@Test
	void objectFormRouteWithAnEmptyListIsRejected() {
		assertRejected(withEndpoint("llm.routes.spread.endpoints=", "llm.routes.spread.balance=weighted"),
				"llm.routes.spread.endpoints", "is empty", "List the endpoints the route tries, in order");
	}

	@Test
	void unknownKeyOfAnObjectFormRouteIsRejected() {
		assertRejected(withEndpoint("llm.routes.spread.endpoints=main", "llm.routes.spread.balanse=weighted"),
				"llm.routes.spread.balanse", "did you mean 'llm.routes.spread.balance'",
				"Rename it to llm.routes.spread.balance, or remove it.");
	}

	@Test
	void negativeMaxConcurrentCallsIsRejected() {
		assertRejected(withEndpoint("llm.gateway.max-concurrent-calls=-1"), "llm.gateway.max-concurrent-calls",
				"is -1, negative", "Use 0 to switch the limit off");
	}

	@Test
	void zeroFailureRateThresholdIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.circuit-breaker.failure-rate-threshold=0"),
				"llm.endpoints.main.circuit-breaker.failure-rate-threshold", "is 0.0, outside the range (0, 100]",
				"Give a percentage above 0 and at most 100, e.g. 50 (built-in default: 50.0).");
	}

	@Test
	void failureRateThresholdAboveAHundredSetInDefaultsIsRejectedThere() {
		assertRejected(withEndpoint("llm.defaults.circuit-breaker.failure-rate-threshold=150"),
				"llm.defaults.circuit-breaker.failure-rate-threshold", "is 150.0, outside the range (0, 100]",
				"Give a percentage above 0 and at most 100");
	}

	@Test
	void slowCallRateThresholdOutOfRangeIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.circuit-breaker.slow-call-rate-threshold=101"),
				"llm.endpoints.main.circuit-breaker.slow-call-rate-threshold", "is 101.0, outside the range (0, 100]",
				"Give a percentage above 0 and at most 100, e.g. 50 (built-in default: 100.0).");
		assertRejected(withEndpoint("llm.defaults.circuit-breaker.slow-call-rate-threshold=-1"),
				"llm.defaults.circuit-breaker.slow-call-rate-threshold", "is -1.0, outside the range (0, 100]",
				"Give a percentage above 0 and at most 100");
	}

	@Test
	void minimumNumberOfCallsAboveTheSlidingWindowIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.circuit-breaker.minimum-number-of-calls=30"),
				"llm.endpoints.main.circuit-breaker.minimum-number-of-calls",
				"is 30, more than the sliding window of 20 calls can ever hold",
				"Set it to at most circuit-breaker.sliding-window-size (20), or enlarge the window.");
	}

	@Test
	void minimumNumberOfCallsSetInDefaultsAboveAnEndpointsWindowIsRejectedWhereItWasSet() {
		assertRejected(withEndpoint("llm.defaults.circuit-breaker.minimum-number-of-calls=15",
				"llm.endpoints.main.circuit-breaker.sliding-window-size=10"),
				"llm.defaults.circuit-breaker.minimum-number-of-calls",
				"is 15, more than the sliding window of 10 calls can ever hold",
				"Set it to at most circuit-breaker.sliding-window-size (10), or enlarge the window.");
	}

	@Test
	void zeroPermittedCallsInHalfOpenStateIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.circuit-breaker.permitted-calls-in-half-open-state=0"),
				"llm.endpoints.main.circuit-breaker.permitted-calls-in-half-open-state", "is 0, but must be at least 1",
				"Set it to 1 or more (built-in default: 3).");
	}

	@Test
	void negativeTimeoutIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.timeout=-1s"), "llm.endpoints.main.timeout",
				"is PT-1S, but must be positive", "Use a positive duration such as 500ms, 30s or 5m.");
	}

	@Test
	void negativeWaitDurationInOpenStateSetInDefaultsIsRejectedThere() {
		assertRejected(withEndpoint("llm.defaults.circuit-breaker.wait-duration-in-open-state=-5s"),
				"llm.defaults.circuit-breaker.wait-duration-in-open-state", "is PT-5S, but must be positive",
				"Use a positive duration such as 500ms, 30s or 5m.");
	}

	@Test
	void waitDurationInOpenStateBelowAMillisecondIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.circuit-breaker.wait-duration-in-open-state=500us"),
				"llm.endpoints.main.circuit-breaker.wait-duration-in-open-state", "is PT0.0005S, but must be at least 1ms",
				"Use a duration of 1ms or more, such as 500ms, 30s or 5m.");
	}

	@Test
	void connectTimeoutBelowAMillisecondIsRejectedRatherThanTurnedIntoNoTimeout() {
		assertRejected(withEndpoint("llm.defaults.connect-timeout=999us"), "llm.defaults.connect-timeout",
				"is PT0.000999S, but must be at least 1ms", "Use a duration of 1ms or more");
	}

	@Test
	void negativeInitialBackoffIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.retry.initial-backoff=-100ms"),
				"llm.endpoints.main.retry.initial-backoff", "is PT-0.1S, but must be positive",
				"Use a positive duration such as 500ms, 30s or 5m.");
	}

	@Test
	void negativeMaxRetryAfterIsRejected() {
		assertRejected(withEndpoint("llm.defaults.retry.max-retry-after=-1s"), "llm.defaults.retry.max-retry-after",
				"is PT-1S, but must not be negative", "Use 0ms or a positive duration.");
	}

	@Test
	void negativeBulkheadMaxWaitIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.bulkhead.max-wait=-5ms"), "llm.endpoints.main.bulkhead.max-wait",
				"is PT-0.005S, but must not be negative", "Use 0ms or a positive duration.");
	}

	@Test
	void negativeStartOrderWaitIsRejectedInDefaultsAndOnAnEndpoint() {
		assertRejected(withEndpoint("llm.defaults.circuit-breaker.start-order-wait=-1s"),
				"llm.defaults.circuit-breaker.start-order-wait", "is PT-1S, but must not be negative",
				"Use 0ms or a positive duration.");
		assertRejected(withEndpoint("llm.endpoints.main.circuit-breaker.start-order-wait=-250ms"),
				"llm.endpoints.main.circuit-breaker.start-order-wait", "is PT-0.25S, but must not be negative",
				"Use 0ms or a positive duration.");
	}

	@Test
	void zeroSlidingWindowIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.circuit-breaker.sliding-window-size=0"),
				"llm.endpoints.main.circuit-breaker.sliding-window-size", "is 0, but must be at least 1",
				"Set it to 1 or more (built-in default: 20).");
	}

	@Test
	void zeroConcurrentCallsIsRejected() {
		assertRejected(withEndpoint("llm.defaults.bulkhead.max-concurrent-calls=0"),
				"llm.defaults.bulkhead.max-concurrent-calls", "is 0, but must be at least 1",
				"Set it to 1 or more (built-in default: 50).");
	}

	@Test
	void maxResponseSizeBelowOneKilobyteIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.max-response-size=512B"),
				"llm.endpoints.main.max-response-size", "is 512B, outside 1KB to 2GB", "Use a size such as 10MB.");
	}

	@Test
	void negativePriceIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.price.output-per-million=-1"), "llm.endpoints.main.price",
				"has a negative price", "Give prices per million tokens as zero or positive numbers.");
	}

	@Test
	void zeroRetryMaxAttemptsIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.retry.max-attempts=0"), "llm.endpoints.main.retry.max-attempts",
				"is 0, but must be at least 1", "Set it to 1 or more (built-in default: 3).");
	}

	@Test
	void jitterOfOneAndAHalfIsRejected() {
		assertRejected(withEndpoint("llm.defaults.retry.jitter=1.5"), "llm.defaults.retry.jitter",
				"is 1.5, outside [0, 1)", "Use a fraction such as 0.25 for +/- 25 %, or 0 for no jitter.");
	}

	@Test
	void multiplierBelowOneIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.retry.multiplier=0.5"), "llm.endpoints.main.retry.multiplier",
				"is 0.5, less than 1", "Use 1.0 for a constant backoff or more for an exponential one.");
	}

	@Test
	void unknownProtocolIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.protocol=bedrock"), "llm.endpoints.main.protocol",
				"is 'bedrock', which is not supported", "Use one of [anthropic, azure-openai, openai, openai-responses]");
	}

	@Test
	void noEndpointWhileEnabledIsRejected() {
		assertRejected(new String[] { "llm.enabled=true" }, "llm.endpoints", "has no endpoint while llm.enabled=true",
				"Configure at least one endpoint, e.g. llm.endpoints.gpt-4o.base-url=https://api.openai.com/v1 and "
						+ "llm.endpoints.gpt-4o.model=gpt-4o, or set llm.enabled=false to switch llm-resilience off.");
	}

	@Test
	void onlyEndpointNamedWithAnUnbracketedDotIsRejectedWithTheBracketedForm() {
		// Boot binds it as the key "gpt-4": the unknown-key check names the bracketed form.
		assertRejected(new String[] { "llm.endpoints.gpt-4.1.base-url=https://api.openai.com/v1",
				"llm.endpoints.gpt-4.1.model=gpt-4.1", "llm.endpoints.gpt-4.1.api-key=" + API_KEY },
				"llm.endpoints.gpt-4.1.api-key", "did you mean 'llm.endpoints[gpt-4.1].api-key'",
				"Rename it to llm.endpoints[gpt-4.1].api-key, or remove it.");
	}

	@Test
	void routeNamingAnEndpointWithAnUnbracketedDotPointsToTheBracketedForm() {
		assertRejected(withEndpoint("llm.routes.default=main,gpt-4.1"), "llm.routes.default",
				"names unknown endpoint 'gpt-4.1'",
				"Use one of the configured endpoints [main], or configure it under llm.endpoints[gpt-4.1].");
		assertRejected(withEndpoint("llm.endpoints.gpt-4.1.base-url=https://api.openai.com/v1",
				"llm.endpoints.gpt-4.1.model=gpt-4.1", "llm.routes.default=main,gpt-4.1"),
				"llm.endpoints.gpt-4.1.base-url", "did you mean 'llm.endpoints[gpt-4.1].base-url'",
				"Rename it to llm.endpoints[gpt-4.1].base-url");
	}

	@Test
	void propertiesOfAnEndpointNamedWithADotAreNamedInBrackets() {
		assertRejected(withEndpoint("llm.endpoints[gpt-4.1].base-url=https://api.openai.com/v1",
				"llm.endpoints[gpt-4.1].retry.max-attempts=0", "llm.endpoints[gpt-4.1].model=gpt-4.1"),
				"llm.endpoints[gpt-4.1].retry.max-attempts", "is 0, but must be at least 1",
				"Set it to 1 or more (built-in default: 3).");
	}

	@Test
	void allEndpointsDisabledIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.enabled=false"), "llm.endpoints", "has no enabled endpoint",
				"Set llm.endpoints.<name>.enabled=true on at least one endpoint, or set llm.enabled=false.");
	}

	@Test
	void routeOfOnlyDisabledEndpointsIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.off.base-url=http://localhost:2/v1", "llm.endpoints.off.model=m",
				"llm.endpoints.off.enabled=false", "llm.routes.cheap=off"), "llm.routes.cheap",
				"names only disabled endpoints [off]", "Enable one of them");
	}

	@Test
	void zeroGatewayDeadlineIsRejected() {
		assertRejected(withEndpoint("llm.gateway.deadline=0"), "llm.gateway.deadline", "is PT0S, but must be positive",
				"Use a duration longer than an endpoint's timeout, such as 90s.");
	}

	@Test
	void negativeRateLimitIsRejected() {
		assertRejected(withEndpoint("llm.endpoints.main.rate-limits.requests-per-minute=-1"),
				"llm.endpoints.main.rate-limits.requests-per-minute", "is -1, but must be at least 0", "Set it to 0 or more");
		assertRejected(withEndpoint("llm.defaults.rate-limits.tokens-per-minute=-5"),
				"llm.defaults.rate-limits.tokens-per-minute", "is -5, but must be at least 0", "Set it to 0 or more");
	}

	@Test
	void retryBudgetOutsideAPercentageIsRejected() {
		assertRejected(withEndpoint("llm.defaults.retry.budget=150"), "llm.defaults.retry.budget",
				"is 150.0, outside [0, 100]", "Give a percentage of the endpoint's calls");
		assertRejected(withEndpoint("llm.endpoints.main.retry.budget-min-per-second=-1"),
				"llm.endpoints.main.retry.budget-min-per-second", "is -1, less than 0", "Use 0 or more retries a second");
	}

	private static String[] withEndpoint(String... properties) {
		return Rejections.withEndpoint(API_KEY, HEADER_VALUE, properties);
	}

	private void assertRejected(String[] properties, String property, String problem, String action) {
		Rejections.assertRejected(this.contextRunner, properties, property, problem, action, API_KEY, HEADER_VALUE);
	}

}
