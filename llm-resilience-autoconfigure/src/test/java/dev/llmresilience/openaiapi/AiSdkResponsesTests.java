package dev.llmresilience.openaiapi;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.WebApplicationType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Vercel AI SDK's default OpenAI provider, {@code createOpenAI({baseURL, apiKey})(model)},
 * which calls {@code POST /v1/responses}, run from Node against a whole application:
 * {@code generateText}, {@code streamText} and a tool round trip ({@code src/test/node/ai-sdk}). The
 * packages pinned by its {@code package-lock.json} are installed with {@code npm ci} into
 * {@code target/ai-sdk}; the test is skipped, saying why, where Node or npm is missing or the
 * install fails (no registry).
 */
class AiSdkResponsesTests {

	private static final Duration INSTALL = Duration.ofMinutes(4);

	private static final Duration RUN = Duration.ofSeconds(90);

	private static final JsonMapper mapper = JsonMapper.builder().build();

	@Test
	void generateTextStreamTextAndAToolRoundTripWorkUnmodified() throws Exception {
		Assumptions.assumeTrue(onPath("node") && onPath("npm"),
				"Skipped: node and npm are not on the PATH (install Node.js 18 or newer to run the AI SDK check)");
		Path dir = install();
		try (FakeUpstream upstreams = FakeUpstream.start();
				ApiServer server = ApiServer.start(WebApplicationType.REACTIVE, "llm.openai-api.enabled=true",
						"llm.openai-api.api-keys=" + OpenAiApiContract.CLIENT_KEY,
						"llm.endpoints.primary.base-url=" + upstreams.primary().url("/v1"),
						"llm.endpoints.primary.model=gpt-4o-mini",
						"llm.endpoints.primary.api-key=" + FakeUpstream.PRIMARY_KEY, "llm.routes.assistant=primary",
						"llm.defaults.retry.max-attempts=1")) {
			upstreams.primary().enqueue(Answers.completion("gpt-4o-mini", "Hello from the gateway", 7, 4));
			upstreams.primary().enqueue(Answers.sse(Answers.stream("Hel", "lo ", "slowly")));
			upstreams.primary().enqueue(Answers.json(200, "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\","
					+ "\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
					+ "\"content\":null,\"tool_calls\":[{\"id\":\"call_paris\",\"type\":\"function\",\"function\":"
					+ "{\"name\":\"weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}],"
					+ "\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":5,\"total_tokens\":25}}"));
			upstreams.primary().enqueue(Answers.completion("It is sunny in Paris."));

			Map<String, JsonNode> checks = run(dir, server.baseUrl());

			assertThat(checks.get("generateText").get("text").asString()).isEqualTo("Hello from the gateway");
			assertThat(checks.get("generateText").get("finishReason").asString()).isEqualTo("stop");
			assertThat(checks.get("generateText").get("inputTokens").asInt()).isEqualTo(7);
			assertThat(checks.get("generateText").get("outputTokens").asInt()).isEqualTo(4);
			assertThat(checks.get("streamText").get("text").asString()).isEqualTo("Hello slowly");
			assertThat(checks.get("streamText").get("finishReason").asString()).isEqualTo("stop");
			assertThat(checks.get("toolRoundTrip").get("text").asString()).isEqualTo("It is sunny in Paris.");
			assertThat(checks.get("toolRoundTrip").get("steps").asInt()).isEqualTo(2);
			assertThat(checks.get("toolRoundTrip").get("toolResults").get(0).asString()).isEqualTo("sunny in Paris");

			JsonNode first = sent(upstreams);
			assertThat(first.get("model").asString()).isEqualTo("gpt-4o-mini");
			assertThat(first.get("messages").get(0).get("role").asString()).isEqualTo("user");
			sent(upstreams);
			sent(upstreams);
			JsonNode resultSent = sent(upstreams);
			List<String> roles = resultSent.get("messages").valueStream().map((m) -> m.get("role").asString()).toList();
			assertThat(roles).containsExactly("user", "assistant", "tool");
			assertThat(resultSent.get("messages").get(1).get("tool_calls").get(0).get("id").asString()).isEqualTo("call_paris");
			assertThat(resultSent.get("messages").get(2).get("tool_call_id").asString()).isEqualTo("call_paris");
			assertThat(resultSent.get("messages").get(2).get("content").asString()).contains("sunny in Paris");
		}
	}

	/** Copies the script and its pinned package files to {@code target/ai-sdk} and runs {@code npm ci} there. */
	private static Path install() throws IOException, InterruptedException {
		Path source = Path.of("src/test/node/ai-sdk");
		Path dir = Path.of("target/ai-sdk");
		Files.createDirectories(dir);
		for (String file : List.of("package.json", "package-lock.json", "check.mjs")) {
			Files.copy(source.resolve(file), dir.resolve(file), StandardCopyOption.REPLACE_EXISTING);
		}
		Result install = exec(dir, INSTALL, Map.of(), "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error");
		Assumptions.assumeTrue(install.exit() == 0, () -> "Skipped: 'npm ci' in " + dir.toAbsolutePath()
				+ " failed (is the npm registry reachable?): " + install.output());
		return dir;
	}

	private static Map<String, JsonNode> run(Path dir, String baseUrl) throws IOException, InterruptedException {
		Result run = exec(dir, RUN, Map.of("LLM_BASE_URL", baseUrl, "LLM_CLIENT_KEY", OpenAiApiContract.CLIENT_KEY,
				"LLM_MODEL", "assistant"), "node", "check.mjs");
		assertThat(run.exit()).as(run.output()).isZero();
		return run.output()
			.lines()
			.filter((line) -> line.startsWith("{\"check\""))
			.map(mapper::readTree)
			.collect(Collectors.toMap((check) -> check.get("check").asString(), (check) -> check));
	}

	private static JsonNode sent(FakeUpstream upstreams) throws InterruptedException {
		return mapper.readTree(upstreams.primary().takeRequest(5, TimeUnit.SECONDS).getBody().utf8());
	}

	private static boolean onPath(String command) {
		String path = System.getenv("PATH");
		if (path == null) {
			return false;
		}
		for (String entry : path.split(File.pathSeparator)) {
			if (Files.isExecutable(Path.of(entry, command))) {
				return true;
			}
		}
		return false;
	}

	/** Runs a command, its output and errors together, ended (forcibly) if it outlasts {@code limit}. */
	private static Result exec(Path dir, Duration limit, Map<String, String> env, String... command)
			throws IOException, InterruptedException {
		Path log = Files.createTempFile("ai-sdk", ".log");
		try {
			ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
				.redirectErrorStream(true)
				.redirectOutput(log.toFile());
			builder.environment().putAll(env);
			Process process = builder.start();
			if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
				process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
				return new Result(-1, String.join(" ", command) + " did not end within " + limit + ": "
						+ Files.readString(log, StandardCharsets.UTF_8));
			}
			return new Result(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
		}
		finally {
			Files.deleteIfExists(log);
		}
	}

	private record Result(int exit, String output) {
	}

}
