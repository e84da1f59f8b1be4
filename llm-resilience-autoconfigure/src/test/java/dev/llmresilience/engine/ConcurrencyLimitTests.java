package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.completion;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * {@code llm.gateway.max-concurrent-calls}: calls in flight through the gateway in all, over every
 * route. Calls are held open by a server that answers only when its gate opens; past the limit a
 * call degrades at once, reaching no endpoint.
 */
class ConcurrencyLimitTests {

	private FakeUpstream upstreams;

	private final FakeUpstream.Gate gate = new FakeUpstream.Gate(completion("held answer"));

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
		this.upstreams.primary().setDispatcher(this.gate);
	}

	@AfterEach
	void stop() {
		this.gate.open();
		this.upstreams.close();
	}

	private ApplicationContextRunner runner(String... properties) {
		return this.upstreams.withActuator()
			.withPropertyValues(properties);
	}

	@Test
	void aCallPastTheLimitIsBusyAtOnceAndReachesNoEndpoint() {
		runner("llm.gateway.max-concurrent-calls=2").run((context) -> {
			CompletableFuture<ChatResponse> first = hold(context, "first");
			CompletableFuture<ChatResponse> second = hold(context, "second");
			assertThat(concurrency(context)).isEqualTo(new ConcurrencyDescriptor(2, 2, 0));

			ChatResponse refused = chat(context, ChatRequest.ofUser("third"));
			assertThat(refused.tier()).isEqualTo(Tier.BUSY);
			assertThat(refused.content()).isEqualTo("The service is busy right now. Please try again in a minute.");
			assertThat(refused.attempts()).extracting(Attempt::endpoint, Attempt::outcome, Attempt::duration)
				.containsExactly(tuple("primary", Outcome.GATEWAY_FULL, Duration.ZERO));
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
			assertThat(concurrency(context)).isEqualTo(new ConcurrencyDescriptor(2, 2, 1));
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("llm.gateway.calls.in-flight").gauge().value()).isEqualTo(2);
			assertThat(meters.get("llm.gateway.calls.refused").functionCounter().count()).isEqualTo(1);
			assertThat(meters.get("llm.gateway.calls").tags("llm.tier", "BUSY").counter().count()).isEqualTo(1);
			assertThat(meters.find("gen_ai.client.operation.duration").tags("error.type", "GATEWAY_FULL").timer())
				.as("no call was made").isNull();

			this.gate.open();
			assertThat(first.get(10, TimeUnit.SECONDS).tier()).isEqualTo(Tier.PRIMARY);
			assertThat(second.get(10, TimeUnit.SECONDS).tier()).isEqualTo(Tier.PRIMARY);
			assertThat(chat(context, ChatRequest.ofUser("fourth")).tier()).isEqualTo(Tier.PRIMARY);
			assertThat(concurrency(context)).isEqualTo(new ConcurrencyDescriptor(2, 0, 1));
		});
	}

	@Test
	void aRefusedCallIsAnsweredFromTheCacheOrDeferred() {
		runner("llm.gateway.max-concurrent-calls=1", "llm.gateway.fallback-cache.enabled=true").run((context) -> {
			this.gate.open();
			assertThat(chat(context, ChatRequest.ofUser("asked before")).tier()).isEqualTo(Tier.PRIMARY);
			FakeUpstream.Gate again = new FakeUpstream.Gate(completion("held answer"));
			this.upstreams.primary().setDispatcher(again);
			try {
				CompletableFuture<ChatResponse> held = hold(context, "held");

				ChatResponse cached = chat(context, ChatRequest.ofUser("asked before"));
				assertThat(cached.tier()).isEqualTo(Tier.CACHED);
				assertThat(cached.content()).isEqualTo("held answer");
				assertThat(cached.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.GATEWAY_FULL);

				ChatResponse deferred = chat(context, ChatRequest.builder().user("later is fine").deferrable(true).build());
				assertThat(deferred.tier()).isEqualTo(Tier.DEFERRED);
				assertThat(deferred.ticket()).isNotBlank();
				assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);

				again.open();
				assertThat(held.get(10, TimeUnit.SECONDS).tier()).isEqualTo(Tier.PRIMARY);
			}
			finally {
				again.open();
			}
		});
	}

	@Test
	void aStreamHoldsItsPermitUntilItEndsAndIsRefusedWithOneBusyChunk() {
		FakeUpstream.Gate held = new FakeUpstream.Gate(Answers.sse(Answers.stream("held", " stream")));
		this.upstreams.primary().setDispatcher(held);
		runner("llm.gateway.max-concurrent-calls=1").run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			CompletableFuture<List<ChatChunk>> stream = gateway.stream(ChatRequest.ofUser("a long answer"))
				.collectList()
				.toFuture();
			await().atMost(Duration.ofSeconds(10)).until(() -> this.upstreams.primary().getRequestCount() == 1);

			assertThat(chat(context, ChatRequest.ofUser("meanwhile")).attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.GATEWAY_FULL);
			List<ChatChunk> refused = gateway.stream(ChatRequest.ofUser("another stream"))
				.collectList()
				.block(Duration.ofSeconds(5));
			assertThat(refused).singleElement().satisfies((chunk) -> {
				assertThat(chunk.tier()).isEqualTo(Tier.BUSY);
				assertThat(chunk.content()).isEqualTo("The service is busy right now. Please try again in a minute.");
			});

			held.open();
			assertThat(stream.get(10, TimeUnit.SECONDS)).extracting(ChatChunk::content).contains("held", " stream");
			assertThat(concurrency(context)).isEqualTo(new ConcurrencyDescriptor(1, 0, 2));
		});
	}

	@Test
	void offByDefault() {
		this.gate.open();
		runner().run((context) -> {
			assertThat(chat(context, ChatRequest.ofUser("hello")).tier()).isEqualTo(Tier.PRIMARY);
			assertThat(concurrency(context)).isEqualTo(new ConcurrencyDescriptor(0, 0, 0));
		});
	}

	// a call the server holds until the gate opens, in flight once the server has it
	private CompletableFuture<ChatResponse> hold(ApplicationContext context, String prompt) {
		int before = this.upstreams.primary().getRequestCount();
		CompletableFuture<ChatResponse> call = context.getBean(LlmGateway.class).chat(ChatRequest.ofUser(prompt)).toFuture();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.upstreams.primary().getRequestCount() == before + 1);
		return call;
	}

	private static ChatResponse chat(ApplicationContext context, ChatRequest request) {
		return context.getBean(LlmGateway.class).chat(request).block(Duration.ofSeconds(5));
	}

	private static ConcurrencyDescriptor concurrency(ApplicationContext context) {
		return context.getBean(LlmBreakersEndpoint.class).breakers().concurrency();
	}

}
