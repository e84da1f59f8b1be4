package dev.llmresilience.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.llmresilience.engine.EndpointRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

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
 * The streaming walkthrough of docs/streaming.md, run against the sample application over real HTTP:
 * {@code POST /api/chat/stream} in front of the simulated provider's stream modes.
 */
@SpringBootTest(webEnvironment = WebEnvironment.DEFINED_PORT,
		properties = { "llm.defaults.retry.initial-backoff=1ms" })
@AutoConfigureWebTestClient
class StreamingSampleTests {

	private static final int PORT = TestSocketUtils.findAvailableTcpPort();

	private static final JsonMapper JSON = JsonMapper.builder().build();

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
		mode("primary", Map.of("mode", "ok"));
		mode("backup", Map.of("mode", "ok"));
		this.endpoints.endpoints().forEach((endpoint) -> endpoint.circuitBreaker().reset());
	}

	@Test
	void streamsTheAnswerAsOneEventPerChunkWithFinishReasonAndUsageOnTheLast() {
		List<ServerSentEvent<Map<String, Object>>> events = stream("Hello");
		assertThat(events).allSatisfy((event) -> {
			assertThat(event.event()).isNull();
			assertThat(event.data()).containsEntry("endpoint", "primary").containsEntry("tier", "PRIMARY");
		});
		assertThat(text(events)).isEqualTo("[primary] You said: Hello");
		Map<String, Object> last = events.get(events.size() - 1).data();
		assertThat(last).containsEntry("finishReason", "stop")
			.containsEntry("usage", Map.of("promptTokens", 12, "completionTokens", 4));
	}

	@Test
	void aCutStreamEndsWithAnErrorEventCarryingTheEndpointAndThePartialText() {
		mode("primary", Map.of("mode", "stream-cut", "after", 2));
		List<ServerSentEvent<Map<String, Object>>> events = stream("Hello");
		assertThat(events).hasSize(3);
		assertThat(text(events.subList(0, 2))).isEqualTo("[primary] You ");
		ServerSentEvent<Map<String, Object>> error = events.get(2);
		assertThat(error.event()).isEqualTo("error");
		assertThat(error.data()).containsEntry("endpoint", "primary")
			.containsEntry("partial", "[primary] You ")
			.containsEntry("error", "STREAM_INTERRUPTED");
		assertThat((String) error.data().get("message")).contains("resume-on-fallback");
	}

	@Test
	void aStalledStreamEndsWithAnErrorEventAfterTheIdleTimeout() {
		mode("primary", Map.of("mode", "stream-stall", "after", 1));
		List<ServerSentEvent<Map<String, Object>>> events = stream("Hello");
		assertThat(events).hasSize(2);
		assertThat(events.get(1).event()).isEqualTo("error");
		assertThat(events.get(1).data()).containsEntry("error", "STREAM_STALLED").containsEntry("partial", "[primary] ");
	}

	@Test
	void aPrimaryFailingBeforeTheFirstChunkFallsBackUnseen() {
		mode("primary", Map.of("mode", "error"));
		List<ServerSentEvent<Map<String, Object>>> events = stream("Hello");
		assertThat(text(events)).isEqualTo("[backup] You said: Hello");
		assertThat(events).allSatisfy((event) -> assertThat(event.data()).containsEntry("endpoint", "backup")
			.containsEntry("tier", "FALLBACK"));
	}

	@Test
	void theSimulatorContinuesAnAssistantPrefixAfterAsManyWords() {
		List<String> data = this.client.post()
			.uri("/sim/backup/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.accept(MediaType.TEXT_EVENT_STREAM, MediaType.APPLICATION_JSON) // as the starter's client sends it
			.bodyValue(Map.of("model", "sim-small", "stream", true, "messages",
					List.of(Map.of("role", "user", "content", "Hello"),
							Map.of("role", "assistant", "content", "[primary] You "))))
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult(new ParameterizedTypeReference<ServerSentEvent<String>>() {
			})
			.getResponseBody()
			.map(ServerSentEvent::data)
			.collectList()
			.block(Duration.ofSeconds(30));
		assertThat(data.get(data.size() - 1)).isEqualTo("[DONE]");
		String continuation = data.stream()
			.filter((event) -> !event.equals("[DONE]"))
			.map((event) -> JSON.readTree(event).path("choices").path(0).path("delta").path("content").asString(""))
			.collect(Collectors.joining());
		assertThat(continuation).isEqualTo("said: Hello");
	}

	@Test
	void aMissingPromptIsABadRequest() {
		this.client.post()
			.uri("/api/chat/stream")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{}")
			.exchange()
			.expectStatus()
			.isBadRequest();
	}

	private List<ServerSentEvent<Map<String, Object>>> stream(String prompt) {
		return this.client.mutate()
			.responseTimeout(Duration.ofSeconds(30))
			.build()
			.post()
			.uri("/api/chat/stream")
			.contentType(MediaType.APPLICATION_JSON)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.bodyValue(Map.of("prompt", prompt))
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
