package dev.llmresilience.sample;

import java.time.Duration;
import java.util.Map;

import dev.llmresilience.engine.EndpointRegistry;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.util.TestSocketUtils;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample application over real HTTP: the gateway calls the simulated provider that the same
 * application serves. {@link ReadmeWalkthroughTests} runs the README's walkthrough verbatim; the
 * walkthrough test here also counts the synthetic probes the primary receives.
 */
@SpringBootTest(webEnvironment = WebEnvironment.DEFINED_PORT,
		properties = { "llm.defaults.circuit-breaker.wait-duration-in-open-state=1s",
				"llm.defaults.retry.initial-backoff=1ms", "llm.gateway.deferral.delay=1s" })
@AutoConfigureWebTestClient
class SampleApplicationTests {

	private static final int PORT = TestSocketUtils.findAvailableTcpPort();

	@DynamicPropertySource
	static void port(DynamicPropertyRegistry registry) {
		registry.add("server.port", () -> PORT);
	}

	@Autowired
	private WebTestClient client;

	@Autowired
	private EndpointRegistry endpoints;

	@BeforeEach
	void healthyProvidersAndClosedBreakers() {
		mode("primary", "ok");
		mode("backup", "ok");
		this.endpoints.endpoints().forEach((endpoint) -> endpoint.circuitBreaker().reset());
	}

	@Test
	void walkthroughFallsBackOpensTheBreakerAndClosesItAfterProbes() {
		assertThat(chat("Hello")).containsEntry("tier", "PRIMARY").containsEntry("endpoint", "primary");

		mode("primary", "error");
		Map<String, Object> fallback = chat("Hello");
		assertThat(fallback).containsEntry("tier", "FALLBACK")
			.containsEntry("endpoint", "backup")
			.containsEntry("content", "[backup] You said: Hello")
			.containsEntry("degraded", true);
		for (int i = 0; i < 3; i++) {
			assertThat(chat("Hello")).containsEntry("tier", "FALLBACK");
		}
		assertThat(breaker("primary")).containsEntry("state", "OPEN");

		mode("primary", "ok");
		// The running application's breaker uses the real clock; wait-duration-in-open-state is 1s here.
		// Once it has passed the library probes the primary itself: the breaker closes with no user call.
		long before = requests("primary");
		Map<?, ?> probesBefore = (Map<?, ?>) breaker("primary").get("probes");
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(200))
			.until(() -> "CLOSED".equals(breaker("primary").get("state")));
		assertThat(requests("primary") - before).as("the three probes").isEqualTo(3);
		Map<String, Object> primary = breaker("primary");
		Map<?, ?> probes = (Map<?, ?>) primary.get("probes");
		assertThat(probes.get("mode")).isEqualTo("SYNTHETIC");
		assertThat(count(probes, "sent") - count(probesBefore, "sent")).isEqualTo(3);
		assertThat(count(probes, "succeeded") - count(probesBefore, "succeeded")).isEqualTo(3);
		assertThat(primary.get("lastTransition")).asInstanceOf(InstanceOfAssertFactories.MAP)
			.containsEntry("from", "HALF_OPEN")
			.containsEntry("to", "CLOSED");
		assertThat(chat("Hello")).containsEntry("tier", "PRIMARY");
	}

	@Test
	void busyWhenEveryEndpointFailsAndFilteredMessageForContentFilters() {
		mode("primary", "content-filter");
		mode("backup", "content-filter");
		Map<String, Object> filtered = chat("Something the filter dislikes");
		assertThat(filtered).containsEntry("tier", "BUSY").containsEntry("finishReason", "content_filter");
		assertThat((String) filtered.get("content")).contains("content filter");
		mode("backup", "empty");
		mode("primary", "error");
		Map<String, Object> busy = chat("Hello");
		assertThat(busy).containsEntry("tier", "BUSY")
			.containsEntry("content", "The service is busy right now. Please try again in a minute.");
	}

	@Test
	void missingPromptIsABadRequestWithAJsonError() {
		this.client.post()
			.uri("/api/chat")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{}")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.message")
			.value((message) -> assertThat((String) message).contains("'prompt' is required"));
	}

	@Test
	void unknownRouteIsABadRequest() {
		this.client.post()
			.uri("/api/chat")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("prompt", "Hi", "route", "nope"))
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("INVALID_REQUEST");
	}

	@Test
	void aBatchPriorityIsTakenAndAnyOtherIsABadRequestNamingTheField() {
		assertThat(chat(Map.of("prompt", "Summarise", "priority", "batch"))).containsEntry("tier", "PRIMARY");
		assertThat(chat(Map.of("prompt", "Hello", "priority", "interactive"))).containsEntry("tier", "PRIMARY");
		for (Object bad : new Object[] { "urgent", "", 1, true }) {
			this.client.post()
				.uri("/api/chat")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(Map.of("prompt", "Hi", "priority", bad))
				.exchange()
				.expectStatus()
				.isBadRequest()
				.expectBody()
				.jsonPath("$.error")
				.isEqualTo("INVALID_REQUEST")
				.jsonPath("$.message")
				.value((message) -> assertThat((String) message).as("for " + bad)
					.contains("'priority' must be \"interactive\" or \"batch\""));
		}
	}

	@Test
	void unknownSimulatorModeIsRejected() {
		this.client.post()
			.uri("/sim/primary/mode")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("mode", "explode"))
			.exchange()
			.expectStatus()
			.isBadRequest();
	}

	@Test
	void actuatorExposesBreakersHealthAndPrometheus() {
		this.client.get().uri("/actuator/llmbreakers").exchange().expectStatus().isOk().expectBody()
			.jsonPath("$.routes.default[0]").isEqualTo("primary")
			.jsonPath("$.routes.default[1]").isEqualTo("backup");
		this.client.get().uri("/actuator/llmbreakers/nope").exchange().expectStatus().isNotFound();
		this.client.get().uri("/actuator/health").exchange().expectStatus().isOk();
		this.client.get().uri("/actuator/prometheus").exchange().expectStatus().isOk();
		String breakers = this.client.get().uri("/actuator/llmbreakers").exchange().expectBody(String.class)
			.returnResult().getResponseBody();
		assertThat(breakers).doesNotContain("sim-key-primary").doesNotContain("sim-key-backup");
	}

	@Test
	void operatorForcesTheBreakerOpenOverHttpAndTrafficMovesToTheBackup() {
		this.client.post()
			.uri("/actuator/llmbreakers/primary")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("state", "FORCED_OPEN"))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.state")
			.isEqualTo("FORCED_OPEN");
		assertThat(chat("Hello")).containsEntry("tier", "FALLBACK");
		this.client.post()
			.uri("/actuator/llmbreakers/primary")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("state", "HALF_OPEN"))
			.exchange()
			.expectStatus()
			.isBadRequest();
		this.client.post()
			.uri("/actuator/llmbreakers/nope")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("state", "RESET"))
			.exchange()
			.expectStatus()
			.isNotFound();
		this.client.post()
			.uri("/actuator/llmbreakers/primary")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("state", "CLOSED"))
			.exchange()
			.expectStatus()
			.isOk();
		assertThat(chat("Hello")).containsEntry("tier", "PRIMARY");
	}

	@Test
	void prometheusShowsBreakerStateAndGenAiMeters() {
		chat("Hello");
		String prometheus = this.client.get()
			.uri("/actuator/prometheus")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		assertThat(prometheus).contains("resilience4j_circuitbreaker_state{name=\"primary\",state=\"closed\"} 1.0")
			.contains("gen_ai_client_operation_duration_seconds_count{")
			.contains("gen_ai_client_token_usage")
			.contains("llm_gateway_calls_total{")
			.doesNotContain("sim-key-primary");
		this.client.get().uri("/actuator/health/llm").exchange().expectStatus().isOk().expectBody()
			.jsonPath("$.status").isEqualTo("UP")
			.jsonPath("$.details.endpoints.primary.state").isEqualTo("CLOSED");
	}

	private Map<String, Object> chat(String prompt) {
		return chat(Map.of("prompt", prompt));
	}

	@SuppressWarnings("unchecked")
	private Map<String, Object> chat(Map<String, Object> body) {
		return this.client.mutate().responseTimeout(Duration.ofSeconds(30)).build()
			.post()
			.uri("/api/chat")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(Map.class)
			.returnResult()
			.getResponseBody();
	}

	private void mode(String provider, String mode) {
		this.client.post()
			.uri("/sim/" + provider + "/mode")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("mode", mode))
			.exchange()
			.expectStatus()
			.isOk();
	}

	private static long count(Map<?, ?> probes, String key) {
		return ((Number) probes.get(key)).longValue();
	}

	@SuppressWarnings("unchecked")
	private long requests(String provider) {
		Map<String, Object> state = this.client.get()
			.uri("/sim/" + provider + "/mode")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(Map.class)
			.returnResult()
			.getResponseBody();
		return ((Number) state.get("requests")).longValue();
	}

	@SuppressWarnings("unchecked")
	private Map<String, Object> breaker(String name) {
		return this.client.get()
			.uri("/actuator/llmbreakers/" + name)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(Map.class)
			.returnResult()
			.getResponseBody();
	}

}
