package dev.llmresilience.gateway;

import java.time.Duration;

import dev.llmresilience.autoconfigure.LlmAutoConfiguration;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

class GatewaySmokeTests {

	private final MockWebServer primary = new MockWebServer();

	private final MockWebServer backup = new MockWebServer();

	@BeforeEach
	void start() throws Exception {
		this.primary.start();
		this.backup.start();
	}

	@AfterEach
	void stop() {
		this.primary.close();
		this.backup.close();
	}

	@Test
	void fallsBackToTheNextEndpointWhenThePrimaryFails() {
		for (int i = 0; i < 3; i++) {
			this.primary.enqueue(new MockResponse.Builder().code(500).body("{\"error\":{\"message\":\"boom\"}}").build());
		}
		this.backup.enqueue(new MockResponse.Builder().code(200)
			.setHeader("Content-Type", "application/json")
			.body("{\"model\":\"m2\",\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}")
			.build());
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
			.withPropertyValues("llm.endpoints.primary.base-url=" + this.primary.url("/v1"),
					"llm.endpoints.primary.model=m1", "llm.endpoints.primary.api-key=sk-test-123456789",
					"llm.endpoints.backup.base-url=" + this.backup.url("/v1"), "llm.endpoints.backup.model=m2",
					"llm.endpoints.backup.priority=1", "llm.defaults.retry.initial-backoff=1ms")
			.run((context) -> {
				ChatResponse response = context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(10));
				assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
				assertThat(response.content()).isEqualTo("hi");
				assertThat(response.attempts()).hasSize(4);
				assertThat(this.primary.getRequestCount()).isEqualTo(3);
				RecordedRequest first = this.primary.takeRequest();
				assertThat(first.getUrl().encodedPath()).isEqualTo("/v1/chat/completions");
				assertThat(first.getHeaders().get("Authorization")).isEqualTo("Bearer sk-test-123456789");
				assertThat(first.getBody().utf8()).contains("\"model\":\"m1\"");
			});
	}

}
