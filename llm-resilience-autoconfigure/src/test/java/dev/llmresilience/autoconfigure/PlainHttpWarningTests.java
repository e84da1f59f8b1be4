package dev.llmresilience.autoconfigure;

import dev.llmresilience.engine.LlmAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WARN at start-up for an endpoint reached over plain http from another machine; none for https,
 * nor for a model on this machine.
 */
@ExtendWith(OutputCaptureExtension.class)
class PlainHttpWarningTests {

	private static final String API_KEY = "sk-plain-http-secret-2718";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class));

	@ParameterizedTest
	@ValueSource(strings = { "http://llm.example.com/v1", "http://10.0.0.5:8000/v1", "http://192.168.1.20:11434/v1",
			"HTTP://Example.COM/v1", "http://[2001:db8::1]:8000/v1" })
	void plainHttpToAnotherMachineIsWarnedAboutWithoutShowingTheKey(String baseUrl, CapturedOutput output) {
		run(baseUrl);
		assertThat(output).contains("WARN")
			.contains("LLM endpoint 'remote': llm.endpoints.remote.base-url is plain http to '")
			.contains("cross the network unencrypted. Use https:// unless every network between is trusted.")
			.doesNotContain(API_KEY);
	}

	@ParameterizedTest
	@ValueSource(strings = { "https://llm.example.com/v1", "http://localhost:11434/v1", "http://LOCALHOST:8000/v1",
			"http://ollama.localhost:11434/v1", "http://127.0.0.1:8000/v1", "http://127.1.2.3:8000/v1",
			"http://[::1]:8000/v1", "http://[0:0:0:0:0:0:0:1]:8000/v1" })
	void httpsOrThisMachineIsNotWarnedAbout(String baseUrl, CapturedOutput output) {
		run(baseUrl);
		assertThat(output).doesNotContain("plain http");
	}

	@Test
	void namesThatOnlyLookLikeLoopbackAreWarnedAbout(CapturedOutput output) {
		run("http://127.0.0.1.example.com/v1");
		run("http://localhost.example.com/v1");
		assertThat(output).contains("plain http to '127.0.0.1.example.com'").contains("plain http to 'localhost.example.com'");
	}

	private void run(String baseUrl) {
		this.contextRunner
			.withPropertyValues("llm.endpoints.remote.base-url=" + baseUrl, "llm.endpoints.remote.model=m",
					"llm.endpoints.remote.api-key=" + API_KEY)
			.run((context) -> assertThat(context).hasNotFailed());
	}

}
