package dev.llmresilience.protocol;

import java.time.Duration;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.llmresilience.support.Answers.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A provider's error quoting a key that is not the endpoint's own (another of the account's keys, a
 * masked key, a bearer token of a proxy in between): the starter cannot know those secrets, so
 * it redacts what is shaped like one before the text reaches an exception.
 */
class KeyShapedProviderTextTests {

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
	void keysTheStarterDoesNotKnowAreRedactedByTheirShape() {
		String otherKey = "sk-proj-other7Hq2mZ9xL4";
		String masked = "sk-abc1****************wxyz";
		String token = "eyJhbGciOiJIUzI1NiJ9.proxy-session-token";
		this.upstreams.primary().enqueue(json(401, "{\"error\":{\"message\":\"Incorrect API key provided: " + otherKey
				+ " (shown as " + masked + "); the gateway sent Authorization: Bearer " + token
				+ "\",\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}"));
		this.upstreams.runner().run((context) -> {
			Throwable error = catchThrowable(() -> FakeUpstream.endpoint(context, "primary")
				.chat(ChatRequest.ofUser("hello"), (attempt) -> {
				})
				.block(Duration.ofSeconds(10)));
			assertThat(error).hasMessageContaining("HTTP 401")
				.hasMessageContaining("Incorrect API key provided: [redacted]")
				.hasMessageContaining("Bearer [redacted]")
				.hasMessageNotContaining("other7Hq2mZ9xL4")
				.hasMessageNotContaining("abc1")
				.hasMessageNotContaining("wxyz")
				.hasMessageNotContaining("proxy-session-token");
		});
	}

}
