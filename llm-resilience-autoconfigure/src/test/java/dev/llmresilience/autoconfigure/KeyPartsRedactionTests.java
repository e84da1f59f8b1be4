package dev.llmresilience.autoconfigure;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A provider that quotes part of a key, as error messages and proxies do (its last eight characters,
 * its first eight or twelve), shows none of it to the caller, in the exception or in the log: the
 * endpoint's own key, another endpoint's and a client key of the OpenAI-compatible API alike. The
 * keys are hex, as Azure's are, so that no key-shaped pattern finds them: only their values can.
 */
@ExtendWith(OutputCaptureExtension.class)
class KeyPartsRedactionTests {

	private static final String PRIMARY_KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

	private static final String BACKUP_KEY = "9a8b7c6d5e4f30211203f4e5d6c7b8a9";

	private static final String CLIENT_KEY = "client-7d1c0e5b3a29f4866a1b2c3d";

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void partsOfConfiguredKeysQuotedByTheProviderReachNeitherTheCallerNorTheLog(CapturedOutput output) {
		this.upstreams.primary().enqueue(quoting(401));
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.primary().enqueue(quoting(400));
		this.upstreams.runner()
			.withUserConfiguration(ClientKeysConfiguration.class)
			.withPropertyValues("llm.endpoints.primary.api-key=" + PRIMARY_KEY,
					"llm.endpoints.backup.api-key=" + BACKUP_KEY, "llm.openai-api.api-keys=" + CLIENT_KEY,
					"logging.level.dev.llmresilience=DEBUG")
			.run((context) -> {
				LlmGateway gateway = context.getBean(LlmGateway.class);
				ChatResponse fellBack = gateway.chat(ChatRequest.ofUser("hello")).block(Duration.ofSeconds(20));
				assertThat(fellBack.tier()).isEqualTo(Tier.FALLBACK);
				assertThat(fellBack.attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.CONFIGURATION_ERROR, Outcome.SUCCESS);
				Throwable refused = catchThrowable(() -> gateway.chat(ChatRequest.ofUser("hello")).block(Duration.ofSeconds(20)));
				assertThat(refused).isInstanceOf(LlmInvalidRequestException.class)
					.hasMessageContaining("The key ...[redacted] is not valid")
					.hasMessageContaining("Keys start [redacted]... and [redacted]...")
					.hasMessageContaining("from the middle " + PRIMARY_KEY.substring(12, 20));
				StringWriter trace = new StringWriter();
				refused.printStackTrace(new PrintWriter(trace));
				String seen = fellBack + "\n" + refused.getMessage() + "\n" + refused + "\n" + trace;
				assertThat(output.getAll()).as("the log").contains("[redacted]");
				for (String part : parts()) {
					assertThat(seen).as("what the caller got").doesNotContain(part);
					assertThat(output.getAll()).as("the log").doesNotContain(part);
				}
			});
	}

	/** The provider's error: a key's last eight, first eight and first twelve, and a run from its middle. */
	private static MockResponse quoting(int status) {
		return json(status, "{\"error\":{\"message\":\"The key ..." + last8(PRIMARY_KEY) + " is not valid. Keys start "
				+ PRIMARY_KEY.substring(0, 8) + "... and " + PRIMARY_KEY.substring(0, 12) + "..., from the middle "
				+ PRIMARY_KEY.substring(12, 20) + ". Also refused: ..." + last8(BACKUP_KEY) + ", " + CLIENT_KEY.substring(0, 12)
				+ "...\",\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}");
	}

	private static List<String> parts() {
		return List.of(last8(PRIMARY_KEY), PRIMARY_KEY.substring(0, 8), last8(BACKUP_KEY), CLIENT_KEY.substring(0, 8));
	}

	private static String last8(String key) {
		return key.substring(key.length() - 8);
	}

	/** The client keys bound as where the OpenAI-compatible API is enabled, without a web server. */
	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(OpenAiApiProperties.class)
	static class ClientKeysConfiguration {

	}

}
