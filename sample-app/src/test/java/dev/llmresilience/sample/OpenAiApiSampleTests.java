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
 * The sample serves the OpenAI-compatible API with the client key {@code sample-client-key}: the
 * README's curl, plain and streamed, the Responses API ({@code /v1/responses}), plain and streamed,
 * and a busy answer as a 503 once both simulated providers fail.
 */
@SpringBootTest(webEnvironment = WebEnvironment.DEFINED_PORT, properties = { "llm.defaults.retry.initial-backoff=1ms" })
@AutoConfigureWebTestClient
class OpenAiApiSampleTests {

	private static final int PORT = TestSocketUtils.findAvailableTcpPort();

	private static final JsonMapper JSON = JsonMapper.builder().build();

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
	void answersInTheOpenAiFormatWithTheSampleClientKey() {
		this.client.post()
			.uri("/v1/chat/completions")
			.header("Authorization", "Bearer sample-client-key")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("model", "default", "messages", List.of(Map.of("role", "user", "content", "Hello"))))
			.exchange()
			.expectStatus().isOk()
			.expectHeader().valueEquals("x-llm-tier", "PRIMARY")
			.expectHeader().valueEquals("x-llm-endpoint", "primary")
			.expectBody()
			.jsonPath("$.object").isEqualTo("chat.completion")
			.jsonPath("$.choices[0].message.role").isEqualTo("assistant")
			.jsonPath("$.choices[0].message.content").isEqualTo("[primary] You said: Hello")
			.jsonPath("$.choices[0].finish_reason").isEqualTo("stop");
	}

	@Test
	void fallsBackAndStreamsEndingWithDone() {
		mode("primary", "error");
		List<String> data = this.client.post()
			.uri("/v1/chat/completions")
			.header("Authorization", "Bearer sample-client-key")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("stream", true, "messages", List.of(Map.of("role", "user", "content", "Hello"))))
			.exchange()
			.expectStatus().isOk()
			.expectHeader().valueEquals("x-llm-tier", "FALLBACK")
			.returnResult(new ParameterizedTypeReference<ServerSentEvent<String>>() {
			})
			.getResponseBody()
			.map(ServerSentEvent::data)
			.collectList()
			.block(Duration.ofSeconds(30));
		assertThat(data.get(data.size() - 1)).isEqualTo("[DONE]");
		String text = data.stream()
			.filter((event) -> !event.equals("[DONE]"))
			.map((event) -> JSON.readTree(event).path("choices").path(0).path("delta").path("content").asString(""))
			.collect(Collectors.joining());
		assertThat(text).isEqualTo("[backup] You said: Hello");
	}

	@Test
	void answersTheResponsesApiWithTheSampleClientKey() {
		this.client.post()
			.uri("/v1/responses")
			.header("Authorization", "Bearer sample-client-key")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("model", "default", "instructions", "Be brief.", "input", "Hello"))
			.exchange()
			.expectStatus().isOk()
			.expectHeader().valueEquals("x-llm-tier", "PRIMARY")
			.expectHeader().valueEquals("x-llm-endpoint", "primary")
			.expectBody()
			.jsonPath("$.object").isEqualTo("response")
			.jsonPath("$.status").isEqualTo("completed")
			.jsonPath("$.instructions").isEqualTo("Be brief.")
			.jsonPath("$.output[0].type").isEqualTo("message")
			.jsonPath("$.output[0].content[0].type").isEqualTo("output_text")
			.jsonPath("$.output[0].content[0].text").isEqualTo("[primary] You said: Hello");
	}

	@Test
	void streamsTheResponsesApiEventsOnFallback() {
		mode("primary", "error");
		List<ServerSentEvent<String>> events = this.client.post()
			.uri("/v1/responses")
			.header("Authorization", "Bearer sample-client-key")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("stream", true, "input", List.of(Map.of("role", "user", "content", "Hello"))))
			.exchange()
			.expectStatus().isOk()
			.expectHeader().valueEquals("x-llm-tier", "FALLBACK")
			.returnResult(new ParameterizedTypeReference<ServerSentEvent<String>>() {
			})
			.getResponseBody()
			.collectList()
			.block(Duration.ofSeconds(30));
		assertThat(events.get(0).event()).isEqualTo("response.created");
		assertThat(events.get(events.size() - 1).event()).isEqualTo("response.completed");
		String text = events.stream()
			.filter((event) -> "response.output_text.delta".equals(event.event()))
			.map((event) -> JSON.readTree(event.data()).path("delta").asString(""))
			.collect(Collectors.joining());
		assertThat(text).isEqualTo("[backup] You said: Hello");
	}

	@Test
	void isBusyWith503WhenBothProvidersFail() {
		mode("primary", "error");
		mode("backup", "error");
		this.client.post()
			.uri("/v1/chat/completions")
			.header("Authorization", "Bearer sample-client-key")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("messages", List.of(Map.of("role", "user", "content", "Hello"))))
			.exchange()
			.expectStatus().isEqualTo(503)
			.expectHeader().valueEquals("x-llm-tier", "BUSY")
			.expectHeader().exists("x-should-retry")
			.expectBody()
			.jsonPath("$.error.code").isEqualTo("llm_busy")
			.jsonPath("$.error.type").isEqualTo("service_unavailable");
	}

	@Test
	void refusesAClientWithoutTheKey() {
		this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("messages", List.of(Map.of("role", "user", "content", "Hello"))))
			.exchange()
			.expectStatus().isUnauthorized()
			.expectBody()
			.jsonPath("$.error.code").isEqualTo("invalid_api_key");
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

}
