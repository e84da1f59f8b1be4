package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Priority;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.answering;
import static dev.llmresilience.support.Answers.completion;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * {@code llm.gateway.batch-share} over real local HTTP: batch calls use at most the share of an
 * endpoint (of its known request limit, else of its bulkhead) and go on down the route past it,
 * then defer or are BUSY, while interactive calls keep the rest. Calls are held open by a server
 * that answers only when its gate opens; what the servers received is the measure.
 */
class BatchShareTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	@Test
	void batchCallsPastTheirShareOfTheBulkheadGoToTheBackupWhileInteractiveCallsKeepThePrimary() {
		FakeUpstream.Gate gate = new FakeUpstream.Gate(completion("held answer"));
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			upstreams.primary().setDispatcher(gate);
			upstreams.backup().setDispatcher(answering("from backup"));
			upstreams.withActuator()
				.withPropertyValues("llm.endpoints.primary.bulkhead.max-concurrent-calls=4", "llm.gateway.batch-share=0.5")
				.run((context) -> {
					CompletableFuture<ChatResponse> batch1 = hold(context, upstreams, batch("one"));
					CompletableFuture<ChatResponse> batch2 = hold(context, upstreams, batch("two"));
					assertThat(batch(context, "primary")).isEqualTo(new CapacityDescriptor.Batch(0.5, "BULKHEAD", 2, 2, 0));

					ChatResponse third = FakeUpstream.chat(context, batch("three"));
					assertThat(third.tier()).isEqualTo(Tier.FALLBACK);
					assertThat(third.content()).isEqualTo("from backup");
					assertThat(third.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
						.containsExactly(tuple("primary", Outcome.CAPACITY_EXHAUSTED), tuple("backup", Outcome.SUCCESS));

					// people keep the other half of the primary
					CompletableFuture<ChatResponse> person1 = hold(context, upstreams, ChatRequest.ofUser("me"));
					CompletableFuture<ChatResponse> person2 = hold(context, upstreams, ChatRequest.ofUser("me too"));
					assertThat(upstreams.primary().getRequestCount()).isEqualTo(4);
					assertThat(upstreams.backup().getRequestCount()).isOne();
					assertThat(batch(context, "primary")).isEqualTo(new CapacityDescriptor.Batch(0.5, "BULKHEAD", 2, 2, 1));
					assertThat(context.getBean(MeterRegistry.class)
						.get(CapacityMeters.BATCH_REFUSED)
						.tag(MeterTags.ENDPOINT, "primary")
						.functionCounter()
						.count()).isOne();
					assertThat(context.getBean(MeterRegistry.class)
						.get(CapacityMeters.BATCH_IN_FLIGHT)
						.tag(MeterTags.ENDPOINT, "primary")
						.gauge()
						.value()).isEqualTo(2);

					gate.open();
					for (CompletableFuture<ChatResponse> call : java.util.List.of(batch1, batch2, person1, person2)) {
						assertThat(call.get(10, TimeUnit.SECONDS).tier()).isEqualTo(Tier.PRIMARY);
					}
					assertThat(batch(context, "primary").inFlight()).isZero();
					assertThat(FakeUpstream.chat(context, batch("after")).tier()).isEqualTo(Tier.PRIMARY);
					assertThat(FakeUpstream.endpoint(context, "primary")
						.circuitBreaker()
						.getMetrics()
						.getNumberOfFailedCalls()).as("a refusal is no breaker failure").isZero();
				});
		}
		finally {
			gate.open();
		}
	}

	@Test
	void batchCallsNeverTakeTheInteractiveReserveOfAKnownRateLimit() {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			upstreams.primary().setDispatcher(answering("from primary"));
			upstreams.backup().setDispatcher(answering("from backup"));
			upstreams.withActuator()
				.withPropertyValues("llm.endpoints.primary.rate-limits.requests-per-minute=4",
						"llm.defaults.retry.max-attempts=1")
				.run((context) -> {
					// the default share, half: 2 of the window's 4 requests, the other 2 kept for people
					assertThat(FakeUpstream.chat(context, batch("one")).tier()).isEqualTo(Tier.PRIMARY);
					assertThat(FakeUpstream.chat(context, batch("two")).tier()).isEqualTo(Tier.PRIMARY);
					ChatResponse third = FakeUpstream.chat(context, batch("three"));
					assertThat(third.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
						.containsExactly(tuple("primary", Outcome.CAPACITY_EXHAUSTED), tuple("backup", Outcome.SUCCESS));
					assertThat(batch(context, "primary")).isEqualTo(new CapacityDescriptor.Batch(0.5, "RATE_LIMIT", 2, 0, 1));

					assertThat(FakeUpstream.chat(context, ChatRequest.ofUser("me")).tier()).isEqualTo(Tier.PRIMARY);
					assertThat(FakeUpstream.chat(context, ChatRequest.ofUser("me too")).tier()).isEqualTo(Tier.PRIMARY);
					assertThat(upstreams.primary().getRequestCount()).isEqualTo(4);
					// the window is spent: now the rate limit itself says no, to everyone
					assertThat(FakeUpstream.chat(context, ChatRequest.ofUser("and me")).attempts())
						.extracting(Attempt::outcome)
						.containsExactly(Outcome.CAPACITY_EXHAUSTED, Outcome.SUCCESS);
					assertThat(capacity(context, "primary").routedAway()).as("counted apart from the batch share").isOne();
				});
		}
	}

	@Test
	void aBatchCallPastItsShareWithNoOtherEndpointDefersIfDeferrableElseIsBusy() {
		try (FakeUpstream upstreams = FakeUpstream.of("primary")) {
			upstreams.primary().setDispatcher(answering("from primary"));
			upstreams.withActuator()
				.withPropertyValues("llm.endpoints.primary.rate-limits.requests-per-minute=2")
				.run((context) -> {
					assertThat(FakeUpstream.chat(context, batch("first")).tier()).isEqualTo(Tier.PRIMARY);

					ChatResponse deferred = FakeUpstream.chat(context,
							ChatRequest.builder().user("later is fine").priority(Priority.BATCH).deferrable(true).build());
					assertThat(deferred.tier()).isEqualTo(Tier.DEFERRED);
					assertThat(deferred.ticket()).isNotBlank();
					assertThat(deferred.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
						.containsExactly(tuple("primary", Outcome.CAPACITY_EXHAUSTED));

					ChatResponse busy = FakeUpstream.chat(context, batch("now or never"));
					assertThat(busy.tier()).isEqualTo(Tier.BUSY);
					assertThat(busy.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.CAPACITY_EXHAUSTED);

					assertThat(FakeUpstream.chat(context, ChatRequest.ofUser("a person")).tier()).isEqualTo(Tier.PRIMARY);
					assertThat(upstreams.primary().getRequestCount()).isEqualTo(2);
					assertThat(batch(context, "primary").refused()).isEqualTo(2);
				});
		}
	}

	@Test
	void aBatchCallsCountIsGivenBackWhenItFailsOrTimesOut() {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			upstreams.primary().setDispatcher(new Dispatcher() {
				@Override
				public MockResponse dispatch(RecordedRequest request) {
					return request.getBody().utf8().contains("slow")
							? completion("too late").newBuilder().headersDelay(4, TimeUnit.SECONDS).build()
							: Answers.error(500, "server_error");
				}
			});
			upstreams.backup().setDispatcher(answering("from backup"));
			// one batch call at a time on the primary: a count not given back refuses every later one
			upstreams.withActuator()
				.withPropertyValues("llm.endpoints.primary.bulkhead.max-concurrent-calls=2",
						"llm.defaults.retry.max-attempts=1", "llm.endpoints.primary.timeout=1s",
						"llm.endpoints.primary.first-token-timeout=1s",
						"llm.endpoints.primary.circuit-breaker.sliding-window-size=100",
						"llm.endpoints.primary.circuit-breaker.minimum-number-of-calls=100")
				.run((context) -> {
					// a first call warms the connection up, within the short timeouts of this test
					FakeUpstream.chat(context, ChatRequest.ofUser("warm-up"));
					for (int i = 0; i < 20; i++) {
						ChatResponse failed = FakeUpstream.chat(context, batch("call " + i));
						assertThat(failed.attempts()).as("call " + i)
							.extracting(Attempt::endpoint, Attempt::outcome)
							.containsExactly(tuple("primary", Outcome.SERVER_ERROR), tuple("backup", Outcome.SUCCESS));
					}
					for (int i = 0; i < 2; i++) {
						ChatResponse timedOut = FakeUpstream.chat(context, batch("slow " + i));
						assertThat(timedOut.attempts()).as("slow " + i)
							.extracting(Attempt::endpoint, Attempt::outcome)
							.containsExactly(tuple("primary", Outcome.TIMEOUT), tuple("backup", Outcome.SUCCESS));
					}
					assertThat(batch(context, "primary").inFlight()).isZero();
					assertThat(batch(context, "primary").refused()).isZero();
				});
		}
	}

	@Test
	void aBatchCallsCountIsGivenBackWhenItsCallerLetsGo() {
		FakeUpstream.Gate gate = new FakeUpstream.Gate(completion("held answer"));
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			upstreams.primary().setDispatcher(gate);
			upstreams.backup().setDispatcher(answering("from backup"));
			upstreams.withActuator()
				.withPropertyValues("llm.endpoints.primary.bulkhead.max-concurrent-calls=2")
				.run((context) -> {
					LlmGateway gateway = context.getBean(LlmGateway.class);
					for (int i = 0; i < 10; i++) {
						int before = upstreams.primary().getRequestCount();
						Disposable call = gateway.chat(batch("cancelled " + i)).subscribe();
						await().atMost(WAIT).until(() -> upstreams.primary().getRequestCount() == before + 1);
						assertThat(batch(context, "primary").inFlight()).isOne();
						call.dispose();
						await().atMost(WAIT).until(() -> batch(context, "primary").inFlight() == 0);
					}
					// the share is whole again: the next batch call is sent to the primary
					CompletableFuture<ChatResponse> next = hold(context, upstreams, batch("next"));
					gate.open();
					assertThat(next.get(10, TimeUnit.SECONDS).tier()).isEqualTo(Tier.PRIMARY);
					assertThat(batch(context, "primary").refused()).isZero();
				});
		}
		finally {
			gate.open();
		}
	}

	@Test
	void aShareOutsideZeroToOneFailsStartUpNamingTheKey() {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			for (String share : new String[] { "0", "-0.1", "1.5", "50" }) {
				upstreams.runner().withPropertyValues("llm.gateway.batch-share=" + share).run((context) -> {
					assertThat(context).hasFailed();
					assertThat(context.getStartupFailure()).rootCause()
						.hasMessageContaining("llm.gateway.batch-share")
						.hasMessageContaining("must be over 0 and at most 1");
				});
			}
			upstreams.runner().withPropertyValues("llm.gateway.batch-share=1").run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(FakeUpstream.endpoint(context, "primary").batchShare().share()).isEqualTo(1.0);
			});
		}
	}

	@Test
	void theRequestsPriorityIsInteractiveUnlessSaidAndSurvivesACopy() {
		assertThat(ChatRequest.ofUser("q").priority()).isEqualTo(Priority.INTERACTIVE);
		ChatRequest batch = batch("q");
		assertThat(batch.toBuilder().temperature(0.2).build().priority()).isEqualTo(Priority.BATCH);
		assertThat(ChatRequest.builder().user("q").priority(null).build().priority()).isEqualTo(Priority.INTERACTIVE);
		assertThat(Priority.parse("BATCH", "priority")).isEqualTo(Priority.BATCH);
		assertThat(Priority.parse(null, "priority")).isEqualTo(Priority.INTERACTIVE);
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> Priority.parse("low", "priority"))
			.withMessage("'priority' must be \"interactive\" or \"batch\" (absent: interactive)");
	}

	private static ChatRequest batch(String prompt) {
		return ChatRequest.builder().user(prompt).priority(Priority.BATCH).build();
	}

	// a call the server holds until the gate opens, in flight once the server has it
	private static CompletableFuture<ChatResponse> hold(ApplicationContext context, FakeUpstream upstreams,
			ChatRequest request) {
		int before = upstreams.primary().getRequestCount();
		CompletableFuture<ChatResponse> call = context.getBean(LlmGateway.class).chat(request).toFuture();
		await().atMost(WAIT).until(() -> upstreams.primary().getRequestCount() == before + 1);
		return call;
	}


	private static CapacityDescriptor capacity(ApplicationContext context, String endpoint) {
		return context.getBean(LlmBreakersEndpoint.class).breaker(endpoint).capacity();
	}

	private static CapacityDescriptor.Batch batch(ApplicationContext context, String endpoint) {
		return capacity(context, endpoint).batch();
	}

}
