package dev.llmresilience.sample;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.test.util.TestSocketUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaged sample, processed by Boot's AOT at build time ({@code process-aot}) and started with
 * {@code -Dspring.aot.enabled=true}, so that its context is the generated one, not one built by
 * reflection at start-up: the gateway, the OpenAI-compatible API (plain and streamed), the actuator
 * and the dashboard answer as in a normal start. Run by maven-failsafe-plugin in {@code verify},
 * after {@code package}; and the native-image configuration AOT wrote into the jar holds the
 * library's hints. This is the JVM half of a native image; the image itself is not built here
 * (docs/native.md).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AotProcessedSampleIT {

	private static final int PORT = TestSocketUtils.findAvailableTcpPort();

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private static Process process;

	private static Path log;

	@BeforeAll
	static void start() throws Exception {
		Path jar = Path.of(System.getProperty("sample.jar", "target/sample-app.jar"));
		assertThat(jar).as("the packaged sample (run 'package' first)").isRegularFile();
		log = Files.createTempFile("aot-sample", ".txt");
		long started = System.nanoTime();
		process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Dspring.aot.enabled=true", "-jar", jar.toString(), "--server.port=" + PORT)
			.redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.start();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
		while (!output().contains("Started SampleApplication")) {
			assertThat(process.isAlive()).as("the application is running; its output:%n%s", output()).isTrue();
			assertThat(System.nanoTime()).as("started within 120 s; its output:%n%s", output()).isLessThan(deadline);
			Thread.sleep(100);
		}
		System.out.printf("AOT-processed sample: started in %d ms (this JVM's clock, process start to the log line)%n",
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
	}

	@AfterAll
	static void stop() throws Exception {
		if (process != null) {
			process.destroy();
			if (!process.waitFor(30, TimeUnit.SECONDS)) {
				process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
			System.out.println(output());
		}
	}

	@Test
	void theApplicationRunsFromTheGeneratedContext() throws IOException {
		assertThat(output()).contains("Starting AOT-processed SampleApplication");
	}

	@Test
	void theJarCarriesTheLibrarysHintsForANativeImage() throws IOException {
		String metadata;
		try (JarFile jar = new JarFile(System.getProperty("sample.jar", "target/sample-app.jar"))) {
			JarEntry entry = jar.getJarEntry(
					"META-INF/native-image/dev.llmresilience/sample-app/reachability-metadata.json");
			assertThat(entry).as("the native-image configuration written by process-aot").isNotNull();
			try (InputStream in = jar.getInputStream(entry)) {
				metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
			}
		}
		JsonNode root = JSON.readTree(metadata);
		List<String> types = new ArrayList<>();
		// a type is a name, or an object for a proxy or a lambda
		root.path("reflection").forEach((hint) -> {
			if (hint.path("type").isValueNode()) {
				types.add(hint.path("type").asString());
			}
		});
		List<String> resources = new ArrayList<>();
		root.path("resources").forEach((hint) -> resources.add(hint.path("glob").asString()));
		assertThat(types).as("the library's aot.factories hints and Boot's own").contains(
				"dev.llmresilience.protocol.openai.OpenAiChatRequest", "dev.llmresilience.protocol.openai.OpenAiChatChunk",
				"dev.llmresilience.protocol.anthropic.AnthropicEvent", "dev.llmresilience.openaiapi.OpenAiApiBodies$Chunk",
				"dev.llmresilience.chat.ChatResponse", "dev.llmresilience.engine.LlmBreakersEndpoint$BreakersDescriptor",
				"dev.llmresilience.autoconfigure.LlmProperties", "dev.llmresilience.autoconfigure.EndpointProperties");
		assertThat(resources).contains("dev/llmresilience/redis/*.lua", "dev/llmresilience/dashboard/dashboard.html");
	}

	@Test
	void theGatewayAnswersFromThePrimary() throws Exception {
		HttpResponse<String> response = post("/api/chat", "{\"prompt\":\"Hello\"}", null);
		assertThat(response.statusCode()).isEqualTo(200);
		JsonNode answer = JSON.readTree(response.body());
		assertThat(answer.path("tier").asString()).isEqualTo("PRIMARY");
		assertThat(answer.path("endpoint").asString()).isEqualTo("primary");
		assertThat(answer.path("content").asString()).isNotBlank();
	}

	/** Last: the primary's failures open its breaker. */
	@Test
	@Order(Integer.MAX_VALUE)
	void theAnthropicEndpointAnswersItsRoute() throws Exception {
		post("/sim/primary/mode", "{\"mode\":\"error\"}", null);
		try {
			HttpResponse<String> response = post("/api/chat", "{\"prompt\":\"Hello\",\"route\":\"mixed\"}", null);
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(JSON.readTree(response.body()).path("endpoint").asString()).isEqualTo("claude");
		}
		finally {
			post("/sim/primary/mode", "{\"mode\":\"ok\"}", null);
		}
	}

	@Test
	void theOpenAiCompatibleApiAnswersPlainAndStreamed() throws Exception {
		String messages = "\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]";
		HttpResponse<String> plain = post("/v1/chat/completions", "{\"model\":\"default\"," + messages + "}",
				"sample-client-key");
		assertThat(plain.statusCode()).isEqualTo(200);
		JsonNode completion = JSON.readTree(plain.body());
		assertThat(completion.path("object").asString()).isEqualTo("chat.completion");
		assertThat(completion.path("choices").path(0).path("message").path("content").asString()).isNotBlank();

		HttpResponse<String> streamed = post("/v1/chat/completions",
				"{\"model\":\"default\",\"stream\":true,\"stream_options\":{\"include_usage\":true}," + messages + "}",
				"sample-client-key");
		assertThat(streamed.statusCode()).isEqualTo(200);
		assertThat(streamed.headers().firstValue("content-type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("text/event-stream"));
		assertThat(streamed.body()).contains("\"object\":\"chat.completion.chunk\"").contains("\"usage\"")
			.containsPattern("data: ?\\[DONE]");

		HttpResponse<String> unauthorised = post("/v1/chat/completions", "{" + messages + "}", "wrong-key");
		assertThat(unauthorised.statusCode()).isEqualTo(401);
		assertThat(JSON.readTree(unauthorised.body()).path("error").path("message").asString()).isNotBlank();
	}

	@Test
	void theActuatorShowsTheBreakersAndHealth() throws Exception {
		HttpResponse<String> breakers = get("/actuator/llmbreakers");
		assertThat(breakers.statusCode()).isEqualTo(200);
		JsonNode endpoints = JSON.readTree(breakers.body()).path("endpoints");
		assertThat(endpoints.path("primary").path("state").asString()).isEqualTo("CLOSED");
		assertThat(endpoints.path("claude").path("model").asString()).isEqualTo("sim-claude");

		HttpResponse<String> health = get("/actuator/health");
		assertThat(health.statusCode()).isEqualTo(200);
		JsonNode status = JSON.readTree(health.body());
		assertThat(status.path("status").asString()).isEqualTo("UP");
		assertThat(status.path("components").path("llm").path("status").asString()).isEqualTo("UP");

		assertThat(get("/actuator/prometheus").body()).contains("resilience4j_circuitbreaker_state");
	}

	@Test
	void theDashboardServesItsPage() throws Exception {
		HttpResponse<String> page = get("/llm/dashboard");
		assertThat(page.statusCode()).isEqualTo(200);
		assertThat(page.body()).contains("<html").contains("llmbreakers");
	}

	private static HttpResponse<String> get(String path) throws Exception {
		return HTTP.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	private static HttpResponse<String> post(String path, String json, String bearer) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json));
		if (bearer != null) {
			request.header("Authorization", "Bearer " + bearer);
		}
		return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static URI uri(String path) {
		return URI.create("http://127.0.0.1:" + PORT + path);
	}

	private static String output() throws IOException {
		return Files.readString(log, StandardCharsets.UTF_8);
	}

}
