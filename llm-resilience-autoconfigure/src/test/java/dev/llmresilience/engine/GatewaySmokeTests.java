package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class GatewaySmokeTests {

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
	void fallsBackToTheNextEndpointWhenThePrimaryFails() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(new MockResponse.Builder().code(500).body("{\"error\":{\"message\":\"boom\"}}").build());
		}
		this.upstreams.backup().enqueue(new MockResponse.Builder().code(200)
			.setHeader("Content-Type", "application/json")
			.body("{\"model\":\"m2\",\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}")
			.build());
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.model=m1", "llm.endpoints.primary.api-key=sk-test-123456789",
					"llm.endpoints.backup.model=m2")
			.run((context) -> {
				ChatResponse response = context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(10));
				assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
				assertThat(response.content()).isEqualTo("hi");
				assertThat(response.attempts()).hasSize(4);
				assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
				RecordedRequest first = this.upstreams.primary().takeRequest();
				assertThat(first.getUrl().encodedPath()).isEqualTo("/v1/chat/completions");
				assertThat(first.getHeaders().get("Authorization")).isEqualTo("Bearer sk-test-123456789");
				assertThat(first.getBody().utf8()).contains("\"model\":\"m1\"");
			});
	}

}
