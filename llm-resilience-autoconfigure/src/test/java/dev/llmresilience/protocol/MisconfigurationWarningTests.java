package dev.llmresilience.protocol;

import java.util.List;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.FakeUpstream.PRIMARY_KEY;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;

/**
 * What an operator reads when an endpoint answers 401, 403 or 404: one WARN that names the URL
 * that was called and the likely fix, never a header or the key; the backup answers meanwhile.
 */
@ExtendWith(OutputCaptureExtension.class)
class MisconfigurationWarningTests {

	/** OpenAI's answer to a request without a key. */
	private static final String NO_KEY_MESSAGE = "You didn't provide an API key. You need to provide your API key in an "
			+ "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field "
			+ "(with blank username) if you're accessing the API from your browser and are prompted for a username.";

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
	void notFoundBelowABaseUrlWithoutVersionNamesTheUrlAndSuggestsV1(CapturedOutput output) {
		String baseUrl = this.upstreams.primary().url("/sim").toString().replaceAll("/$", "");
		this.upstreams.primary().enqueue(json(404, "{\"error\":{\"message\":\"Not found\",\"type\":\"invalid_request_error\"}}"));
		this.upstreams.backup().enqueue(completion("from the backup"));
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.base-url=" + baseUrl).run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(warnings(output)).singleElement(STRING)
				.contains("Endpoint 'primary'")
				.contains("HTTP 404 from POST " + baseUrl + "/chat/completions")
				.contains("the provider says: Not found")
				.contains("try llm.endpoints.primary.base-url=" + baseUrl + "/v1");
		});
		assertThat(output.getAll()).doesNotContain(PRIMARY_KEY).doesNotContain("Bearer");
	}

	@Test
	void notFoundBelowAVersionedBaseUrlPointsAtTheModel(CapturedOutput output) {
		this.upstreams.primary().enqueue(json(404, "{\"error\":{\"message\":\"The model `primary-model` does not exist\","
				+ "\"type\":\"invalid_request_error\",\"code\":\"model_not_found\"}}"));
		this.upstreams.backup().enqueue(completion("from the backup"));
		this.upstreams.runner().run((context) -> {
			assertThat(chat(context).tier()).isEqualTo(Tier.FALLBACK);
			assertThat(warnings(output)).singleElement(STRING)
				.contains("HTTP 404 from POST " + this.upstreams.primary().url("/v1/chat/completions"))
				.contains("Check that model 'primary-model' exists at this provider (llm.endpoints.primary.model)")
				.doesNotContain("/v1/v1");
		});
	}

	@Test
	void unauthorizedWithoutAKeySaysToSetOneAndKeepsTheProvidersWordsAboutBearer(CapturedOutput output) {
		this.upstreams.primary().enqueue(json(401, "{\"error\":{\"message\":\"" + NO_KEY_MESSAGE
				+ "\",\"type\":\"invalid_request_error\",\"code\":null}}"));
		this.upstreams.backup().enqueue(completion("from the backup"));
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.api-key=").run((context) -> {
			assertThat(chat(context).tier()).isEqualTo(Tier.FALLBACK);
			assertThat(warnings(output)).singleElement(STRING)
				.contains("HTTP 401 from POST " + this.upstreams.primary().url("/v1/chat/completions"))
				.contains("using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)")
				.contains("No api-key is configured: set llm.endpoints.primary.api-key");
		});
	}

	@Test
	void unauthorizedWithAKeySaysTheKeyWasRefusedWithoutShowingIt(CapturedOutput output) {
		this.upstreams.primary().enqueue(Answers.recorded("openai/dotnet-record-401-invalid-api-key.json"));
		this.upstreams.backup().enqueue(completion("from the backup"));
		this.upstreams.runner().run((context) -> {
			assertThat(chat(context).tier()).isEqualTo(Tier.FALLBACK);
			assertThat(warnings(output)).singleElement(STRING)
				.contains("HTTP 401 from POST")
				.contains("Incorrect API key provided: [redacted]")
				.contains("The provider refused the key: check that llm.endpoints.primary.api-key holds a valid key for localhost");
		});
		assertThat(output.getAll()).doesNotContain(PRIMARY_KEY).doesNotContain(PRIMARY_KEY.substring(0, 8));
	}

	@Test
	void forbiddenPointsAtTheKeysPermissionsForTheModel(CapturedOutput output) {
		this.upstreams.primary().enqueue(Answers.error(403, "unsupported_country_region_territory"));
		this.upstreams.backup().enqueue(completion("from the backup"));
		this.upstreams.runner().run((context) -> {
			assertThat(chat(context).tier()).isEqualTo(Tier.FALLBACK);
			assertThat(warnings(output)).singleElement(STRING)
				.contains("HTTP 403 from POST")
				.contains("not allowed to use model 'primary-model'");
		});
	}

	@Test
	void redactionHidesBearerTokensButNotTheWordBearer() {
		assertThat(Redaction.redact("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig was refused", (String) null))
			.isEqualTo("Authorization: Bearer [redacted] was refused");
		assertThat(Redaction.redact("use Bearer auth: Authorization: Bearer YOUR_KEY", (String) null))
			.isEqualTo("use Bearer auth: Authorization: Bearer YOUR_KEY");
		assertThat(Redaction.redact("Bearer " + PRIMARY_KEY, PRIMARY_KEY)).isEqualTo("Bearer [redacted]");
	}

	private static List<String> warnings(CapturedOutput output) {
		return output.getAll().lines().filter((line) -> line.contains("WARN") && line.contains("misconfigured")).toList();
	}

}
