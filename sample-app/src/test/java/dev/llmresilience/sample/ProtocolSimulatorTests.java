package dev.llmresilience.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.llmresilience.engine.EndpointRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.util.TestSocketUtils;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's route {@code mixed: [primary, claude, azure]} over real HTTP: the gateway speaks
 * OpenAI's, Anthropic's and Azure's protocols to the simulator the same application serves, and
 * falls from one to the next as the simulated providers fail in their own ways.
 */
@SpringBootTest(webEnvironment = WebEnvironment.DEFINED_PORT, properties = { "llm.defaults.retry.initial-backoff=1ms" })
@AutoConfigureWebTestClient
class ProtocolSimulatorTests {

	private static final int PORT = TestSocketUtils.findAvailableTcpPort();

	private static final ParameterizedTypeReference<ServerSentEvent<Map<String, Object>>> EVENTS = new ParameterizedTypeReference<>() {
	};

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
		for (String provider : List.of("primary", "claude", "azure")) {
			mode(provider, Map.of("mode", "ok"));
		}
		this.endpoints.endpoints().forEach((endpoint) -> endpoint.circuitBreaker().reset());
	}

	@Test
	void mixedRouteAnswersThroughAnthropicThenAzureAsTheEarlierProvidersFail() {
		assertThat(chat()).containsEntry("tier", "PRIMARY").containsEntry("endpoint", "primary");
		mode("primary", Map.of("mode", "error"));
		assertThat(chat()).containsEntry("tier", "FALLBACK")
			.containsEntry("endpoint", "claude")
			.containsEntry("model", "sim-claude")
			.containsEntry("content", "[claude] You said: Hello")
			.containsEntry("finishReason", "stop");
		mode("claude", Map.of("mode", "error"));
		long before = requests("claude");
		Map<String, Object> azure = chat();
		assertThat(azure).containsEntry("tier", "FALLBACK")
			.containsEntry("endpoint", "azure")
			.containsEntry("model", "sim-deployment")
			.containsEntry("content", "[azure] You said: Hello");
		assertThat(azure.get("attempts").toString()).contains("SERVER_ERROR");
		assertThat(requests("claude") - before).isEqualTo(3);
	}

	@Test
	void anthropicContentFilterIsPassedOverToAzure() {
		mode("primary", Map.of("mode", "error"));
		mode("claude", Map.of("mode", "content-filter"));
		long before = requests("claude");
		assertThat(chat()).containsEntry("endpoint", "azure").containsEntry("tier", "FALLBACK");
		assertThat(requests("claude") - before).isOne();
	}

	@Test
	void mixedRouteStreamsFromAnthropicAndEndsWithItsMidStreamErrorAsAnErrorEvent() {
		mode("primary", Map.of("mode", "error"));
		List<ServerSentEvent<Map<String, Object>>> events = stream();
		assertThat(text(events)).isEqualTo("[claude] You said: Hello");
		assertThat(events).allSatisfy((event) -> assertThat(event.data()).containsEntry("endpoint", "claude"));

		mode("claude", Map.of("mode", "stream-error", "after", 2));
		List<ServerSentEvent<Map<String, Object>>> broken = stream();
		ServerSentEvent<Map<String, Object>> last = broken.get(broken.size() - 1);
		assertThat(last.event()).isEqualTo("error");
		assertThat(last.data()).containsEntry("endpoint", "claude")
			.containsEntry("partial", "[claude] You ")
			.containsEntry("error", "STREAM_INTERRUPTED");
	}

	@Test
	void simulatedAnthropicRefusesARequestWithoutItsHeaders() {
		this.client.post()
			.uri("/sim/claude/anthropic/v1/messages")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("model", "sim-claude", "max_tokens", 10, "messages",
					List.of(Map.of("role", "user", "content", "Hi"))))
			.exchange()
			.expectStatus()
			.isUnauthorized()
			.expectBody()
			.jsonPath("$.error.type")
			.isEqualTo("authentication_error");
	}

	private Map<String, Object> chat() {
		return this.client.mutate().responseTimeout(Duration.ofSeconds(30)).build()
			.post()
			.uri("/api/chat")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("prompt", "Hello", "route", "mixed"))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(new ParameterizedTypeReference<Map<String, Object>>() {
			})
			.returnResult()
			.getResponseBody();
	}

	private List<ServerSentEvent<Map<String, Object>>> stream() {
		return this.client.mutate()
			.responseTimeout(Duration.ofSeconds(30))
			.build()
			.post()
			.uri("/api/chat/stream")
			.contentType(MediaType.APPLICATION_JSON)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.bodyValue(Map.of("prompt", "Hello", "route", "mixed"))
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult(EVENTS)
			.getResponseBody()
			.collectList()
			.block(Duration.ofSeconds(30));
	}

	private static String text(List<ServerSentEvent<Map<String, Object>>> events) {
		return events.stream().map((event) -> (String) event.data().get("content")).collect(Collectors.joining());
	}

	// The simulator counts every request a provider received since the application started.
	private long requests(String provider) {
		return ((Number) this.client.get()
			.uri("/sim/" + provider + "/mode")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(new ParameterizedTypeReference<Map<String, Object>>() {
			})
			.returnResult()
			.getResponseBody()
			.get("requests")).longValue();
	}

	private void mode(String provider, Map<String, Object> mode) {
		this.client.post()
			.uri("/sim/" + provider + "/mode")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(mode)
			.exchange()
			.expectStatus()
			.isOk();
	}

}
