package dev.llmresilience.engine;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /actuator/llmbreakers} over a real WebFlux server: the JSON of docs/operations.md, and
 * no API key or header value in it, nor in {@code /actuator/configprops} and {@code /actuator/env};
 * the write operation is refused unless the application allows it.
 */
// the application named: the package holds another test application, which the nested classes would find too
@SpringBootTest(classes = LlmBreakersEndpointWebTests.TestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive",
				"management.endpoints.web.exposure.include=llmbreakers,configprops,env",
				"llm.endpoints.gpt-4o.base-url=http://localhost:9/v1", "llm.endpoints.gpt-4o.model=gpt-4o",
				"llm.endpoints.gpt-4o.region=us", "llm.endpoints.gpt-4o.api-key=" + LlmBreakersEndpointWebTests.API_KEY,
				"llm.endpoints.gpt-4o.headers.OpenAI-Organization=" + LlmBreakersEndpointWebTests.HEADER_VALUE,
				"llm.endpoints.deepseek.base-url=http://localhost:9/v1", "llm.endpoints.deepseek.model=deepseek-chat",
				"llm.endpoints.deepseek.priority=1", "llm.endpoints.deepseek.api-key=" + LlmBreakersEndpointWebTests.API_KEY,
				"llm.endpoints.deepseek.circuit-breaker.sliding-window-size=10",
				"llm.endpoints.deepseek.bulkhead.max-concurrent-calls=5", "llm.routes.cheap=deepseek" })
@AutoConfigureWebTestClient
class LlmBreakersEndpointWebTests {

	static final String API_KEY = "sk-web-secret-0123456789";

	static final String HEADER_VALUE = "org-header-secret-9876";

	@Autowired
	private WebTestClient client;

	@Autowired
	private EndpointRegistry registry;

	@Test
	void reportShowsEveryEndpointsBreakerAndBulkheadAndTheRoutes() {
		this.client.get()
			.uri("/actuator/llmbreakers")
			.exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.endpoints.gpt-4o.model").isEqualTo("gpt-4o")
			.jsonPath("$.endpoints.gpt-4o.region").isEqualTo("us")
			.jsonPath("$.endpoints.gpt-4o.priority").isEqualTo(0)
			.jsonPath("$.endpoints.gpt-4o.state").isEqualTo("CLOSED")
			.jsonPath("$.endpoints.gpt-4o.failureRate").isEqualTo(-1.0)
			.jsonPath("$.endpoints.gpt-4o.slowCallRate").isEqualTo(-1.0)
			.jsonPath("$.endpoints.gpt-4o.bufferedCalls").isEqualTo(0)
			.jsonPath("$.endpoints.gpt-4o.failedCalls").isEqualTo(0)
			.jsonPath("$.endpoints.gpt-4o.slowCalls").isEqualTo(0)
			.jsonPath("$.endpoints.gpt-4o.notPermittedCalls").isEqualTo(0)
			.jsonPath("$.endpoints.gpt-4o.heldCalls").isEqualTo(0)
			.jsonPath("$.endpoints.gpt-4o.config.slidingWindowSize").isEqualTo(20)
			.jsonPath("$.endpoints.gpt-4o.config.minimumNumberOfCalls").isEqualTo(20)
			.jsonPath("$.endpoints.gpt-4o.config.failureRateThreshold").isEqualTo(50.0)
			.jsonPath("$.endpoints.gpt-4o.config.waitDurationInOpenState").isEqualTo("PT30S")
			.jsonPath("$.endpoints.gpt-4o.config.permittedCallsInHalfOpenState").isEqualTo(3)
			.jsonPath("$.endpoints.gpt-4o.config.startOrderWait").isEqualTo("PT5S")
			.jsonPath("$.endpoints.gpt-4o.bulkhead.maxConcurrentCalls").isEqualTo(50)
			.jsonPath("$.endpoints.gpt-4o.bulkhead.availableConcurrentCalls").isEqualTo(50)
			.jsonPath("$.endpoints.gpt-4o.lastTransition").doesNotExist()
			.jsonPath("$.endpoints.deepseek.model").isEqualTo("deepseek-chat")
			.jsonPath("$.endpoints.deepseek.priority").isEqualTo(1)
			.jsonPath("$.endpoints.deepseek.config.slidingWindowSize").isEqualTo(10)
			.jsonPath("$.endpoints.deepseek.config.minimumNumberOfCalls").isEqualTo(10)
			.jsonPath("$.endpoints.deepseek.bulkhead.maxConcurrentCalls").isEqualTo(5)
			.jsonPath("$.routes.default").isEqualTo(List.of("gpt-4o", "deepseek"))
			.jsonPath("$.routes.cheap").isEqualTo(List.of("deepseek"));
	}

	@Test
	void oneEndpointByName() {
		this.client.get()
			.uri("/actuator/llmbreakers/gpt-4o")
			.exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.model").isEqualTo("gpt-4o")
			.jsonPath("$.config.waitDurationInOpenState").isEqualTo("PT30S")
			.jsonPath("$.bulkhead.availableConcurrentCalls").isEqualTo(50)
			.jsonPath("$.endpoints").doesNotExist();
	}

	@Test
	void endpointShowsTheEvidenceOfAHangAndItsProbesBound() {
		// no first token known yet: no threshold, and a probe would wait the whole first-token timeout
		this.client.get()
			.uri("/actuator/llmbreakers/gpt-4o")
			.exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.hang.enabled").isEqualTo(true)
			.jsonPath("$.hang.threshold").doesNotExist()
			.jsonPath("$.hang.minWaitingCalls").isEqualTo(5)
			.jsonPath("$.hang.waitingCalls").isEqualTo(0)
			.jsonPath("$.hang.oldestWait").doesNotExist()
			.jsonPath("$.hang.lastFirstTokenAt").doesNotExist()
			.jsonPath("$.hang.openings").isEqualTo(0)
			.jsonPath("$.hang.lastOpening").doesNotExist()
			.jsonPath("$.hang.probeTimeout").isEqualTo("PT10S");
	}

	@Test
	void unknownEndpointIsNotFound() {
		this.client.get().uri("/actuator/llmbreakers/nope").exchange().expectStatus().isNotFound();
	}

	@Test
	void openedBreakerShowsOpenAndTheTransitionFromClosed() {
		CircuitBreaker breaker = this.registry.endpoint("deepseek").circuitBreaker();
		breaker.transitionToOpenState();
		try {
			this.client.get()
				.uri("/actuator/llmbreakers/deepseek")
				.exchange()
				.expectStatus().isOk()
				.expectBody()
				.jsonPath("$.state").isEqualTo("OPEN")
				.jsonPath("$.lastTransition.from").isEqualTo("CLOSED")
				.jsonPath("$.lastTransition.to").isEqualTo("OPEN")
				.jsonPath("$.lastTransition.at").value((at) -> assertThat(Instant.parse((String) at))
					.isBeforeOrEqualTo(Instant.now()));
		}
		finally {
			breaker.transitionToClosedState();
		}
	}

	@Test
	void writeOperationIsRefusedByDefault() {
		this.client.post()
			.uri("/actuator/llmbreakers/gpt-4o")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("state", "FORCED_OPEN"))
			.exchange()
			.expectStatus().value((status) -> assertThat(status).isIn(404, 405));
		assertThat(this.registry.endpoint("gpt-4o").circuitBreaker().getState()).isEqualTo(CircuitBreaker.State.CLOSED);
	}

	@Test
	void neitherApiKeyNorHeaderValueIsShown() {
		for (String uri : new String[] { "/actuator/llmbreakers", "/actuator/llmbreakers/gpt-4o" }) {
			String body = body(uri);
			assertThat(body).contains("gpt-4o").doesNotContain(API_KEY).doesNotContain(HEADER_VALUE);
		}
	}

	@Test
	void configpropsAndEnvHideTheKeyAndHeaderValuesByDefault() {
		String configprops = body("/actuator/configprops");
		assertThat(configprops).contains("\"apiKey\":\"******\"").contains("\"OpenAI-Organization\":\"******\"");
		String env = body("/actuator/env");
		assertThat(env).contains("\"llm.endpoints.gpt-4o.api-key\":{\"value\":\"******\"")
			.contains("\"llm.endpoints.gpt-4o.headers.OpenAI-Organization\":{\"value\":\"******\"");
		assertThat(configprops + env).doesNotContain(API_KEY).doesNotContain(HEADER_VALUE);
	}

	private String body(String uri) {
		return this.client.get()
			.uri(uri)
			.exchange()
			.expectStatus().isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
	}

	@Nested
	@TestPropertySource(properties = { "management.endpoint.configprops.show-values=always",
			"management.endpoint.env.show-values=always" })
	class WithShowValuesAlways {

		@Test
		void llmbreakersStillShowsNeitherKeyNorHeaderValue() {
			assertThat(body("/actuator/llmbreakers")).contains("gpt-4o").doesNotContain(API_KEY).doesNotContain(HEADER_VALUE);
		}

		// Boot 3+ masks by show-values, not by key name: with "always", only a SanitizingFunction
		// bean of the application would hide these. That is the application's choice to make.
		@Test
		void configpropsAndEnvShowTheKeyAndHeaderValuesBecauseTheApplicationAskedForEveryValue() {
			assertThat(body("/actuator/configprops")).contains(API_KEY).contains(HEADER_VALUE);
			assertThat(body("/actuator/env")).contains(API_KEY).contains(HEADER_VALUE);
		}

	}

	@Nested
	@TestPropertySource(properties = "management.endpoint.llmbreakers.access=unrestricted")
	class WithUnrestrictedAccess {

		@Test
		void writeOperationMovesTheBreaker() {
			try {
				LlmBreakersEndpointWebTests.this.client.post()
					.uri("/actuator/llmbreakers/gpt-4o")
					.contentType(MediaType.APPLICATION_JSON)
					.bodyValue(Map.of("state", "FORCED_OPEN"))
					.exchange()
					.expectStatus().isOk()
					.expectBody()
					.jsonPath("$.state").isEqualTo("FORCED_OPEN");
				assertThat(LlmBreakersEndpointWebTests.this.registry.endpoint("gpt-4o").circuitBreaker().getState())
					.isEqualTo(CircuitBreaker.State.FORCED_OPEN);
			}
			finally {
				LlmBreakersEndpointWebTests.this.registry.endpoint("gpt-4o").circuitBreaker().reset();
			}
		}

	}

	@Nested
	@TestPropertySource(properties = { "llm.gateway.hedge.enabled=true", "llm.gateway.hedge.adaptive=false",
			"llm.gateway.hedge.delay=1500ms", "llm.gateway.hedge.max-ratio=0.25" })
	class WithHedging {

		// the route's policy and counts are one flat object, in the order docs/operations.md shows
		@Test
		void hedgingIsOneFlatObjectPerRoute() {
			String body = body("/actuator/llmbreakers");
			String hedging = body.substring(body.indexOf("\"hedging\":"));
			assertThat(hedging).startsWith("\"hedging\":{\"default\":{\"delay\":\"fixed\",\"percentile\":")
				.contains("\"fixedDelay\":\"PT1.5S\",\"minDelay\":")
				.contains("\"maxRatio\":0.25,\"window\":\"PT1M\",\"byPromptSize\":true,\"callsInWindow\":0,\"hedgesInWindow\":0,"
						+ "\"hedgeWon\":0,\"firstWon\":0,\"noWinner\":0,\"refused\":0}")
				.doesNotContain("policy")
				.doesNotContain("counts");
		}

	}

	@Nested
	@TestPropertySource(properties = { "llm.gateway.hedge.enabled=true", "llm.gateway.hedge.max-ratio=0.25" })
	class WithAdaptiveHedgingByPromptSize {

		// each endpoint of the route with the prompt sizes it has seen: none yet
		@Test
		void hedgingShowsTheDelayOfEachPromptSizeByEndpoint() {
			String body = body("/actuator/llmbreakers");
			String hedging = body.substring(body.indexOf("\"hedging\":"));
			assertThat(hedging).startsWith("\"hedging\":{\"default\":{\"delay\":\"adaptive\",")
				.contains("\"byPromptSize\":true,")
				.contains("\"refused\":0,\"bySize\":{\"gpt-4o\":{}");
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class TestApplication {

	}

}
