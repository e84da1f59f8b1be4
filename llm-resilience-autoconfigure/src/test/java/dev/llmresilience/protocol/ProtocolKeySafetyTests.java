package dev.llmresilience.protocol;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.Wire;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.Answers.sse;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The keys of Anthropic and Azure endpoints, sent in their own headers ({@code x-api-key},
 * {@code api-key}), show nowhere a user could look while the providers' messages repeat them, with
 * the starter at TRACE and Reactor Netty and WebClient at DEBUG; and each key goes only to its own
 * endpoint, in its protocol's header alone.
 */
@ExtendWith(OutputCaptureExtension.class)
class ProtocolKeySafetyTests {

	private static final String[] LOGGERS = { "dev.llmresilience", "reactor.netty",
			"org.springframework.web.reactive.function.client" };

	private FakeUpstream upstreams;

	@AfterEach
	void stop() {
		this.upstreams.close();
		LoggingSystem logging = LoggingSystem.get(getClass().getClassLoader());
		for (String logger : LOGGERS) {
			logging.setLogLevel(logger, null);
		}
	}

	@ParameterizedTest
	@EnumSource(value = Wire.class, names = { "ANTHROPIC", "AZURE_OPENAI" })
	void keyEchoedByTheProviderShowsNowhereAndGoesOnlyToItsOwnEndpoint(Wire wire, CapturedOutput output)
			throws Exception {
		LoggingSystem logging = LoggingSystem.get(getClass().getClassLoader());
		logging.setLogLevel("dev.llmresilience", LogLevel.TRACE);
		logging.setLogLevel("reactor.netty", LogLevel.DEBUG);
		logging.setLogLevel("org.springframework.web.reactive.function.client", LogLevel.DEBUG);
		String key = "sk-PROTOCOLKEY-" + UUID.randomUUID();
		this.upstreams = FakeUpstream.start(wire);
		String echo = (wire == Wire.ANTHROPIC)
				? "{\"type\":\"error\",\"error\":{\"type\":\"%s\",\"message\":\"key " + key + " refused\"}}"
				: "{\"error\":{\"code\":\"%s\",\"message\":\"key " + key + " refused\"}}";
		this.upstreams.server("primary").enqueue(json(401, echo.formatted((wire == Wire.ANTHROPIC) ? "authentication_error" : "401")));
		for (int i = 0; i < 3; i++) {
			this.upstreams.server("primary").enqueue(json(529, echo.formatted((wire == Wire.ANTHROPIC) ? "overloaded_error" : "529")));
		}
		this.upstreams.server("primary").enqueue(sse(wire.streamStart() + wire.text("Hi") + ((wire == Wire.ANTHROPIC)
				? "event: error\ndata: " + echo.formatted("overloaded_error") + "\n\n" : "data: " + echo.formatted("500") + "\n\n")));
		this.upstreams.server("backup").enqueue(wire.answer("one"));
		this.upstreams.server("backup").enqueue(wire.answer("two"));
		List<String> seen = new ArrayList<>();
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.api-key=" + key).run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			for (int i = 0; i < 2; i++) {
				ChatResponse response = gateway.chat(ChatRequest.ofUser("hello")).block(Duration.ofSeconds(10));
				seen.add(response.toString());
			}
			Throwable broken = catchThrowable(() -> gateway.stream(ChatRequest.ofUser("hello"))
				.map(ChatChunk::content)
				.collectList()
				.block(Duration.ofSeconds(10)));
			seen.add(trace(broken));
			seen.add(context.getBean(EndpointRegistry.class).endpoint("primary").settings().toString());
			seen.add(context.getBean(EndpointRegistry.class).endpoint("primary").settings().client().toString());
		});
		seen.add(output.getAll());
		assertThat(String.join("\n", seen)).contains("[redacted] refused").doesNotContain(key);
		String header = (wire == Wire.ANTHROPIC) ? "x-api-key" : "api-key";
		for (int i = 0; i < 5; i++) {
			RecordedRequest request = this.upstreams.server("primary").takeRequest();
			assertThat(request.getHeaders().get(header)).isEqualTo(key);
			assertThat(request.getHeaders().toMultimap().entrySet())
				.filteredOn((entry) -> !entry.getKey().equalsIgnoreCase(header))
				.allSatisfy((entry) -> assertThat(entry.getValue().toString()).doesNotContain(key));
		}
		for (int i = 0; i < 2; i++) {
			assertThat(this.upstreams.server("backup").takeRequest().getHeaders().toString()).doesNotContain(key);
		}
	}

	private static String trace(Throwable error) {
		StringWriter text = new StringWriter();
		error.printStackTrace(new PrintWriter(text));
		return text.toString();
	}

}
