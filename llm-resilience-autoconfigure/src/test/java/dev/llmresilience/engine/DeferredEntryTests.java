package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.DeferredStore;
import dev.llmresilience.spi.DeferredStore.DeferredEntry;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a stored deferred request shows of itself: an entry's {@code toString()} ends up in logs
 * (a store's error, a debugger's view), and its ticket is a bearer token for the answer.
 */
class DeferredEntryTests {

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
	void aStoredEntryShowsNeitherItsTicketNorItsPrompt() {
		this.upstreams.runner().withPropertyValues("llm.gateway.deferral.delay=5m").run((context) -> {
			endpoint(context, "primary").circuitBreaker().transitionToForcedOpenState();
			endpoint(context, "backup").circuitBreaker().transitionToForcedOpenState();
			ChatRequest request = ChatRequest.builder().user("the private prompt").deferrable(true).build();
			ChatResponse answer = context.getBean(LlmGateway.class).chat(request).block(Duration.ofSeconds(10));
			assertThat(answer.tier()).isEqualTo(Tier.DEFERRED);
			List<DeferredEntry> pending = context.getBean(DeferredStore.class).pending();
			assertThat(pending).singleElement()
				.satisfies((entry) -> assertThat(entry.ticket()).isEqualTo(answer.ticket()))
				.extracting(Object::toString)
				.satisfies((shown) -> assertThat(shown).contains("PENDING")
					.doesNotContain(answer.ticket().substring(4, 16))
					.doesNotContain("private prompt"));
		});
	}

}
