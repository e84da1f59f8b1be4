package dev.llmresilience.autoconfigure;

import dev.llmresilience.engine.LlmAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The configuration of the trust boundaries fails start-up when it cannot work: headers
 * that Netty would refuse on every call (which the breaker would then count against the provider),
 * headers the client or the key set, and ceilings and caps that are not positive. Messages name the
 * header, never its value.
 */
class BoundaryConfigurationTests {

	private static final String API_KEY = "sk-boundary-config-secret-4242";

	private static final String HEADER_VALUE = "header-secret-value-88";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class));

	@Test
	void headerValueThatWouldSplitTheRequestIsRejectedWithoutBeingShown() {
		assertRejected(with("llm.endpoints.main.headers.X-Org=" + HEADER_VALUE + "\r\nX-Injected: 1"),
				"llm.endpoints.main.headers.X-Org", "has a value with a control character",
				"the value itself is not shown here");
	}

	@ParameterizedTest
	@ValueSource(strings = { "X Org", "X@Org", "Ünicode", "X(Org)" })
	void headerNameThatIsNoHttpTokenIsRejected(String name) {
		assertRejected(with("llm.endpoints.main.headers[" + name + "]=v"), "llm.endpoints.main.headers." + name,
				"is not a valid HTTP header name", "e.g. OpenAI-Organization");
	}

	@ParameterizedTest
	@ValueSource(strings = { "Host", "content-length", "Transfer-Encoding", "Connection" })
	void transportHeaderIsRejected(String name) {
		assertRejected(with("llm.endpoints.main.headers." + name + "=x"), "llm.endpoints.main.headers." + name,
				"is a header the HTTP client sets itself", "Remove it");
	}

	@ParameterizedTest
	@ValueSource(strings = { "Content-Type", "Accept" })
	void headerTheStarterSetsIsRejected(String name) {
		assertRejected(with("llm.endpoints.main.headers." + name + "=text/plain"),
				"llm.endpoints.main.headers." + name, "is a header the starter sets on every request", "Remove it");
	}

	@Test
	void authorizationHeaderBesideAnApiKeyIsRejected() {
		assertRejected(with("llm.endpoints.main.headers.Authorization=Basic " + HEADER_VALUE),
				"llm.endpoints.main.headers.Authorization", "would be replaced by the api-key's",
				"Set either api-key or this header, not both.");
	}

	@Test
	void authorizationHeaderWithoutAnApiKeyIsTaken() {
		this.contextRunner
			.withPropertyValues("llm.endpoints.main.base-url=http://localhost:8080/v1", "llm.endpoints.main.model=m",
					"llm.endpoints.main.headers.Authorization=Basic dXNlcjpwYXNz")
			.run((context) -> org.assertj.core.api.Assertions.assertThat(context).hasNotFailed());
	}

	@Test
	void nonPositiveRequestCeilingsAreRejected() {
		assertRejected(with("llm.gateway.max-request-timeout=0s"), "llm.gateway.max-request-timeout",
				"is PT0S, but must be positive", "such as 10m");
		assertRejected(with("llm.gateway.max-request-deadline=-1m"), "llm.gateway.max-request-deadline",
				"is PT-1M, but must be positive", "such as 10m");
	}

	@Test
	void streamCapsOutOfRangeAreRejected() {
		assertRejected(with("llm.defaults.max-stream-size=100B"), "llm.defaults.max-stream-size",
				"is 100B, outside 1KB to 2GB", "Use a size such as 10MB.");
		assertRejected(with("llm.endpoints.main.max-stream-events=0"), "llm.endpoints.main.max-stream-events",
				"is 0, but must be at least 1", "built-in default: 200000");
	}

	@Test
	void zeroRetainedDeferredRequestsIsRejected() {
		assertRejected(with("llm.gateway.deferral.max-retained=0"), "llm.gateway.deferral.max-retained",
				"is 0, but must be at least 1", "Set it to 1 or more.");
	}

	private static String[] with(String... properties) {
		return Rejections.withEndpoint(API_KEY, HEADER_VALUE, properties);
	}

	private void assertRejected(String[] properties, String property, String problem, String action) {
		Rejections.assertRejected(this.contextRunner, properties, property, problem, action, API_KEY, HEADER_VALUE);
	}

}
