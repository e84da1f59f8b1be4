package dev.llmresilience.sample;

import java.io.UncheckedIOException;
import java.net.http.HttpTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import dev.llmresilience.sample.ReadmeScript.Output;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.util.TestSocketUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The README's five-minute walkthrough, read from README.md and run command by command, verbatim,
 * against the sample application (on a free port instead of 8080). Each command's output is checked
 * against what the README's comments promise; a command added to, removed from or changed in the
 * README fails the first assertion until this list says what it should print. {@code sleep N}
 * becomes a wait of at most 2N seconds for the next command to print what it should, since the
 * test shortens the sample's waits (open state 5 s instead of 15 s, first deferred attempt after
 * 2 s instead of 20 s).
 */
@SpringBootTest(webEnvironment = WebEnvironment.DEFINED_PORT,
		properties = { "llm.defaults.circuit-breaker.wait-duration-in-open-state=5s",
				"llm.defaults.retry.initial-backoff=1ms", "llm.gateway.deferral.delay=2s" })
class ReadmeWalkthroughTests {

	private static final int PORT = TestSocketUtils.findAvailableTcpPort();

	private static final Path README = Path.of(System.getProperty("readme", "../README.md"));

	private static final JsonMapper JSON = JsonMapper.builder().build();

	/** How long a call of the warm-up may take: the JVM's first calls, on a machine busy with other work. */
	private static final Duration COLD = Duration.ofMinutes(2);

	/** How long one warm-up call waits for its answer before it is sent again. */
	private static final Duration WARM_CALL = Duration.ofSeconds(40);

	private static final String CHAT = "curl -s -XPOST localhost:8080/api/chat -H 'Content-Type: application/json' -d '{\"prompt\":\"Hello\"}'";

	private static final String CHAT_ECHO = CHAT + "; echo";

	private final Map<String, String> variables = new HashMap<>();

	@DynamicPropertySource
	static void port(DynamicPropertyRegistry registry) {
		registry.add("server.port", () -> PORT);
	}

	@Test
	void walkthroughRunsAsWritten() {
		List<Step> steps = new ArrayList<>();
		steps.add(new Step(CHAT, json((answer) -> assertThat(answer.get("tier").asString()).isEqualTo("PRIMARY"))));
		steps.add(mode("primary", "error"));
		for (int i = 0; i < 3; i++) {
			boolean last = i == 2;
			steps.add(new Step(CHAT_ECHO, json((answer) -> {
				assertThat(answer.get("tier").asString()).isEqualTo("FALLBACK");
				assertThat(answer.get("endpoint").asString()).isEqualTo("backup");
				if (last) {
					assertThat(answer.get("attempts").get(0).get("outcome").asString()).isEqualTo("BREAKER_OPEN");
				}
			})));
		}
		steps.add(new Step("curl -s localhost:8080/actuator/llmbreakers/primary",
				json((breaker) -> assertThat(breaker.get("state").asString()).isEqualTo("OPEN"))));
		steps.add(new Step("curl -s localhost:8080/actuator/prometheus | grep -E "
				+ "'^(resilience4j_circuitbreaker_state\\{name=\"primary\"|gen_ai_client_operation_duration_seconds_count|llm_gateway_fallbacks)'",
				(output) -> assertThat(output.text())
					.contains("resilience4j_circuitbreaker_state{name=\"primary\",state=\"open\"} 1.0")
					.containsPattern("gen_ai_client_operation_duration_seconds_count\\{.*error_type=\"SERVER_ERROR\".*llm_endpoint=\"primary\"")
					.contains("llm_gateway_fallbacks_total{llm_from=\"primary\",llm_route=\"default\",llm_to=\"backup\"}")));
		steps.add(new Step("curl -s localhost:8080/actuator/health/llm", json((health) -> {
			assertThat(health.get("status").asString()).isEqualTo("UP");
			assertThat(health.get("details").get("endpoints").get("primary").get("state").asString()).isEqualTo("OPEN");
		})));
		steps.add(mode("primary", "ok"));
		steps.add(new Step("sleep 16", null));
		steps.add(new Step("curl -s localhost:8080/actuator/llmbreakers/primary", json((primary) -> {
			assertThat(primary.get("state").asString()).isEqualTo("CLOSED");
			assertThat(primary.get("lastTransition").get("to").asString()).isEqualTo("CLOSED");
			assertThat(primary.get("probes").get("mode").asString()).isEqualTo("SYNTHETIC");
			assertThat(primary.get("probes").get("succeeded").asInt()).isEqualTo(3);
		})));
		steps.add(new Step(CHAT, json((answer) -> assertThat(answer.get("tier").asString()).isEqualTo("PRIMARY"))));
		steps.add(mode("primary", "error"));
		steps.add(mode("backup", "error"));
		steps.add(new Step("curl -s -XPOST localhost:8080/api/chat -H 'Content-Type: application/json' "
				+ "-d '{\"prompt\":\"Write the nightly report\",\"deferrable\":true}'", json((answer) -> {
					assertThat(answer.get("tier").asString()).isEqualTo("DEFERRED");
					assertThat(answer.get("ticket").asString()).startsWith("dfr_");
					this.variables.put("TICKET", answer.get("ticket").asString());
				})));
		steps.add(new Step("TICKET=dfr_paste_the_ticket_here", null));
		steps.add(new Step("curl -s localhost:8080/api/deferred/$TICKET", json((state) -> {
			assertThat(state.get("state").asString()).isEqualTo("PENDING");
			assertThat(state.get("durable").asBoolean()).as("kept in memory only").isFalse();
		})));
		steps.add(mode("backup", "ok"));
		steps.add(new Step("sleep 25", null));
		steps.add(new Step("curl -s localhost:8080/api/deferred/$TICKET", json((state) -> {
			assertThat(state.get("state").asString()).isEqualTo("COMPLETED");
			assertThat(state.get("response").get("content").asString()).isEqualTo("[backup] You said: Write the nightly report");
		})));

		List<String> readme = ReadmeScript.commands(README, "## Five-minute walkthrough");
		assertThat(readme).as("the walkthrough's commands in README.md").containsExactlyElementsOf(
				steps.stream().map(Step::command).toList());
		warmUp();
		run(steps);
	}

	/**
	 * A fresh JVM's first calls load and compile the whole path (WebFlux, the WebClient, Jackson, the
	 * simulator), which on a loaded machine takes longer than the sample's 3 s timeouts: the first
	 * call would time out on the primary and be answered by the backup. So the walkthrough runs
	 * against a warmed-up application, as a reader's second try would: a few calls over every path
	 * it takes, then every breaker reset, so that it starts in the state a fresh one has. A cold
	 * call may take the JVM long to answer on a busy machine ({@link #COLD}); the walkthrough's own
	 * steps keep their 30 s and the sample's timeouts.
	 * <p>
	 * Once in CI a warm-up call went unanswered for the whole two minutes (a GET of
	 * {@code /actuator/llmbreakers/primary}, on a connection the JDK's client kept from the call
	 * before), which no cold JVM explains. So a warm-up call waits at most {@link #WARM_CALL}, and one
	 * that gets no answer is sent again on a new connection (the timed-out one is closed), up to
	 * {@link #COLD} in all; each time the test prints every thread of the JVM (the application's and
	 * the client's), so that a hang, should it come back, says where it is.
	 */
	private static void warmUp() {
		for (int i = 0; i < 3; i++) {
			warm(CHAT.replace("Hello", "warm-up"));
			warm("curl -s -XPOST localhost:8080/api/chat -H 'Content-Type: application/json' "
					+ "-d '{\"prompt\":\"warm-up\",\"route\":\"mixed\"}'");
			warm("curl -s localhost:8080/api/deferred/dfr_warm_up");
			warm("curl -s localhost:8080/actuator/llmbreakers/primary");
			warm("curl -s localhost:8080/actuator/health/llm");
			warm("curl -s localhost:8080/actuator/prometheus");
		}
		for (String endpoint : List.of("primary", "backup", "claude", "azure")) {
			Output reset = warm("curl -s -XPOST localhost:8080/actuator/llmbreakers/" + endpoint
					+ " -H 'Content-Type: application/json' -d '{\"state\":\"RESET\"}'");
			assertThat(reset.status()).as("reset %s after the warm-up", endpoint).isEqualTo(200);
		}
	}

	// every warm-up call may be sent twice: a chat, a read, a reset to a state already reset
	private static Output warm(String command) {
		long deadline = System.nanoTime() + COLD.toNanos();
		while (true) {
			try {
				return ReadmeScript.curl(command, PORT, Map.of(), WARM_CALL);
			}
			catch (UncheckedIOException ex) {
				if (!(ex.getCause() instanceof HttpTimeoutException) || System.nanoTime() - deadline > 0) {
					throw ex;
				}
				System.err.println("Warm-up: no answer within " + WARM_CALL.toSeconds() + " s to: " + command
						+ "; sending it again on a new connection. Every thread now:\n" + threads());
			}
		}
	}

	private static String threads() {
		StringBuilder dump = new StringBuilder();
		Thread.getAllStackTraces().forEach((thread, frames) -> {
			dump.append('"').append(thread.getName()).append("\" ").append(thread.getState()).append('\n');
			for (StackTraceElement frame : frames) {
				dump.append("\tat ").append(frame).append('\n');
			}
		});
		return dump.toString();
	}

	private void run(List<Step> steps) {
		Duration eventually = null;
		for (Step step : steps) {
			String command = step.command();
			if (command.startsWith("sleep ")) {
				eventually = Duration.ofSeconds(2 * Long.parseLong(command.substring("sleep ".length())));
			}
			else if (command.startsWith("TICKET=")) {
				assertThat(this.variables).as("the ticket the previous answer carried").containsKey("TICKET");
			}
			else if (eventually != null) {
				await(command).atMost(eventually).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> check(step));
				eventually = null;
			}
			else {
				check(step);
			}
		}
	}

	private void check(Step step) {
		Output output = ReadmeScript.curl(step.command(), PORT, this.variables);
		assertThat(output.status()).as(step.command()).isEqualTo(200);
		try {
			step.check().accept(output);
		}
		catch (AssertionError ex) {
			throw new AssertionError(step.command() + " printed " + output.text() + ": " + ex.getMessage(), ex);
		}
	}

	private static Step mode(String provider, String mode) {
		return new Step("curl -s -XPOST localhost:8080/sim/" + provider + "/mode -H 'Content-Type: application/json' -d '{\"mode\":\""
				+ mode + "\"}'", json((answer) -> assertThat(answer.get("mode").asString()).isEqualTo(mode)));
	}

	private static Consumer<Output> json(Consumer<JsonNode> check) {
		return (output) -> check.accept(JSON.readTree(output.text()));
	}

	/**
	 * One command of the README and what its output must show.
	 *
	 * @param command the command, as the README writes it
	 * @param check what its output must show, {@code null} for a command that prints nothing
	 */
	record Step(String command, Consumer<Output> check) {
	}

}
