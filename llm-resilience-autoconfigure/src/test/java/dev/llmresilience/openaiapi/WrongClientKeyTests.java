package dev.llmresilience.openaiapi;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.WebApplicationType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client with a wrong key gets a 401 that repeats nothing of what it sent, in no header and not
 * in the body: a wrong key may be a key for something else, and the answer may reach a proxy's log.
 */
class WrongClientKeyTests {

	private static final String WRONG_KEY = "sk-another-service-0123456789abcdef";

	private FakeUpstream upstreams;

	private ApiServer server;

	@BeforeEach
	void startApplication() {
		this.upstreams = FakeUpstream.start();
		this.server = ApiServer.start(WebApplicationType.REACTIVE, "llm.openai-api.enabled=true",
				"llm.openai-api.api-keys=" + OpenAiApiContract.CLIENT_KEY,
				"llm.endpoints.primary.base-url=" + this.upstreams.primary().url("/v1"),
				"llm.endpoints.primary.model=gpt-4o-mini",
				"llm.endpoints.backup.base-url=" + this.upstreams.backup().url("/v1"),
				"llm.endpoints.backup.model=backup-model", "llm.endpoints.backup.priority=1");
	}

	@AfterEach
	void stopApplication() {
		this.server.close();
		this.upstreams.close();
	}

	@Test
	void aWrongKeyIsRefusedWithoutRepeatingAnyPartOfIt() throws Exception {
		HttpResponse<String> response = this.server.postChat(WRONG_KEY,
				"{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", Map.of());
		assertThat(response.statusCode()).isEqualTo(401);
		String middle = WRONG_KEY.substring(10, 22);
		assertThat(response.body()).contains("invalid_api_key").doesNotContain(middle);
		response.headers().map().forEach((name, values) -> assertThat(values).as(name)
			.noneMatch((value) -> value.contains(middle)));
		assertThat(response.headers().allValues("www-authenticate")).isEqualTo(List.of("Bearer"));
		assertThat(this.upstreams.primary().getRequestCount()).isZero();
	}

}
