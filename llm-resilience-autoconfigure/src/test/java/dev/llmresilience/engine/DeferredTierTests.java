package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.DeferredRequestFailedEvent;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.RouteSelector;
import dev.llmresilience.support.DeferredEvents;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.MutableClock;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.observation.ObservationRegistry;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.context.event.EventListener;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.error;
import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.FakeUpstream.chat;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The deferred tier: a deferrable request that nothing live can answer is
 * queued, answered at once with a ticket, retried in the background and ended COMPLETED or FAILED
 * with an application event. The queue's timers run in virtual time; every endpoint makes one
 * attempt per call, since a retry's backoff would run in virtual time too.
 */
@ExtendWith(OutputCaptureExtension.class)
class DeferredTierTests {

	private static final String TICKET = "dfr_[A-Za-z0-9_-]{22}";

	private static final String QUEUED = "Your request is queued and will be answered shortly.";

	private FakeUpstream upstreams;

	private RecordingVirtualTime time;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
		this.time = RecordingVirtualTime.install();
	}

	@AfterEach
	void stop() {
		VirtualTimeScheduler.reset();
		this.upstreams.close();
	}

	private ApplicationContextRunner runner() {
		return this.upstreams.runner()
			.withPropertyValues("llm.defaults.retry.max-attempts=1", "llm.gateway.deferral.delay=5m")
			.withBean(DeferredEvents.class);
	}

	private static ChatRequest deferrable(String prompt) {
		return ChatRequest.builder().user(prompt).deferrable(true).build();
	}

	@Test
	void deferrableRequestIsAnsweredAtOnceWithATicketAndCompletesOnceTheUpstreamRecovers() {
		this.upstreams.primary().enqueue(error(503, "overloaded"));
		this.upstreams.backup().enqueue(error(503, "overloaded"));
		runner().run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			ChatResponse answer = chat(context, deferrable("summarise last night's logs"));
			assertThat(answer.tier()).isEqualTo(Tier.DEFERRED);
			assertThat(answer.isDegraded()).isTrue();
			assertThat(answer.content()).isEqualTo(QUEUED);
			assertThat(answer.ticket()).matches(TICKET);
			assertThat(answer.endpoint()).isNull();
			assertThat(answer.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.SERVER_ERROR, Outcome.SERVER_ERROR);
			String ticket = answer.ticket();
			assertThat(gateway.deferred(ticket).block())
				.as("held in memory only: not durable")
				.isEqualTo(new DeferredResult(ticket, DeferredResult.State.PENDING, null, null, false));

			this.upstreams.primary().enqueue(completion("the summary"));
			this.time.advanceTimeBy(Duration.ofMinutes(5));

			DeferredRequestCompletedEvent event = context.getBean(DeferredEvents.class)
				.next(DeferredRequestCompletedEvent.class);
			assertThat(event.getTicket()).isEqualTo(ticket);
			assertThat(event.getResponse().content()).isEqualTo("the summary");
			DeferredResult result = gateway.deferred(ticket).block();
			assertThat(result.state()).isEqualTo(DeferredResult.State.COMPLETED);
			assertThat(result.reason()).isNull();
			assertThat(result.response().content()).isEqualTo("the summary");
			assertThat(result.response().tier()).isEqualTo(Tier.PRIMARY);
			assertThat(result.response().endpoint()).isEqualTo("primary");
			assertThat(result.response().ticket()).isEqualTo(ticket);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
			assertThat(this.upstreams.backup().getRequestCount()).isOne();
			this.upstreams.primary().takeRequest(1, TimeUnit.SECONDS);
			RecordedRequest background = this.upstreams.primary().takeRequest(1, TimeUnit.SECONDS);
			assertThat(background.getBody().utf8()).contains("summarise last night's logs");
			assertThat(context.getBean(DeferredQueue.class).counts()).isEqualTo(new DeferredQueue.Counts(1, 1, 0, 0));
		});
	}

	@Test
	void ticketsAreUnguessableAndDistinct() {
		runner().run((context) -> {
			forceOpen(context, "primary", "backup");
			String first = chat(context, deferrable("one")).ticket();
			String second = chat(context, deferrable("one")).ticket();
			assertThat(first).matches(TICKET);
			assertThat(second).matches(TICKET);
			assertThat(first).isNotEqualTo(second);
		});
	}

	@Test
	void backgroundAttemptsWaitTheDelayThenTwiceAsLongAsTheOneBeforeAndFailAfterMaxAttempts() {
		runner().withPropertyValues("llm.gateway.deferral.delay=1m", "llm.gateway.deferral.max-attempts=3")
			.run((context) -> {
				forceOpen(context, "primary", "backup");
				CircuitBreaker primary = endpoint(context, "primary").circuitBreaker();
				DeferredEvents events = context.getBean(DeferredEvents.class);
				String ticket = chat(context, deferrable("nightly report")).ticket();
				assertThat(primary.getMetrics().getNumberOfNotPermittedCalls()).isOne();

				this.time.advanceTimeBy(Duration.ofSeconds(59));
				assertThat(primary.getMetrics().getNumberOfNotPermittedCalls()).isOne();
				this.time.advanceTimeBy(Duration.ofSeconds(1));
				assertThat(primary.getMetrics().getNumberOfNotPermittedCalls()).isEqualTo(2);

				this.time.advanceTimeBy(Duration.ofSeconds(119));
				assertThat(primary.getMetrics().getNumberOfNotPermittedCalls()).isEqualTo(2);
				this.time.advanceTimeBy(Duration.ofSeconds(1));
				assertThat(primary.getMetrics().getNumberOfNotPermittedCalls()).isEqualTo(3);

				this.time.advanceTimeBy(Duration.ofSeconds(239));
				assertThat(primary.getMetrics().getNumberOfNotPermittedCalls()).isEqualTo(3);
				assertThat(state(context, ticket)).isEqualTo(DeferredResult.State.PENDING);
				assertThat(events.waiting()).isZero();
				this.time.advanceTimeBy(Duration.ofSeconds(1));
				assertThat(primary.getMetrics().getNumberOfNotPermittedCalls()).isEqualTo(4);

				DeferredRequestFailedEvent failed = events.next(DeferredRequestFailedEvent.class);
				assertThat(failed.getTicket()).isEqualTo(ticket);
				assertThat(failed.getReason()).isEqualTo("No endpoint could answer in 3 background attempts");
				DeferredResult result = context.getBean(LlmGateway.class).deferred(ticket).block();
				assertThat(result).isEqualTo(new DeferredResult(ticket, DeferredResult.State.FAILED, null,
						"No endpoint could answer in 3 background attempts", false));
				this.time.advanceTimeBy(Duration.ofHours(1));
				assertThat(primary.getMetrics().getNumberOfNotPermittedCalls()).isEqualTo(4);
				assertThat(context.getBean(DeferredQueue.class).counts()).isEqualTo(new DeferredQueue.Counts(1, 0, 1, 0));
			});
	}

	@Test
	void requestThatNoUpstreamAnswersInItsBackgroundAttemptsFails() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(error(503, "overloaded"));
			this.upstreams.backup().enqueue(error(503, "overloaded"));
		}
		runner().withPropertyValues("llm.gateway.deferral.max-attempts=2").run((context) -> {
			String ticket = chat(context, deferrable("weekly digest")).ticket();
			this.time.advanceTimeBy(Duration.ofMinutes(5));
			this.time.awaitTimers(Duration.ofMinutes(10), 1);
			assertThat(state(context, ticket)).isEqualTo(DeferredResult.State.PENDING);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
			assertThat(this.upstreams.backup().getRequestCount()).isEqualTo(2);

			this.time.advanceTimeBy(Duration.ofMinutes(10));
			DeferredRequestFailedEvent failed = context.getBean(DeferredEvents.class).next(DeferredRequestFailedEvent.class);
			assertThat(failed.getTicket()).isEqualTo(ticket);
			DeferredResult result = context.getBean(LlmGateway.class).deferred(ticket).block();
			assertThat(result.state()).isEqualTo(DeferredResult.State.FAILED);
			assertThat(result.response()).isNull();
			assertThat(result.reason()).isEqualTo("No endpoint could answer in 2 background attempts");
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
			assertThat(this.upstreams.backup().getRequestCount()).isEqualTo(3);
		});
	}

	@Test
	void callerErrorDuringABackgroundAttemptFailsTheRequestAtOnce() {
		this.upstreams.primary().enqueue(error(503, "overloaded"));
		this.upstreams.backup().enqueue(error(503, "overloaded"));
		this.upstreams.primary().enqueue(error(400, "invalid_request_error"));
		runner().withPropertyValues("llm.gateway.deferral.max-attempts=3").run((context) -> {
			String ticket = chat(context, deferrable("bad request")).ticket();
			this.time.advanceTimeBy(Duration.ofMinutes(5));
			DeferredRequestFailedEvent failed = context.getBean(DeferredEvents.class).next(DeferredRequestFailedEvent.class);
			assertThat(failed.getTicket()).isEqualTo(ticket);
			assertThat(failed.getReason()).startsWith("Refused by the provider: ");
			DeferredResult result = context.getBean(LlmGateway.class).deferred(ticket).block();
			assertThat(result.state()).isEqualTo(DeferredResult.State.FAILED);
			assertThat(result.reason()).isEqualTo(failed.getReason());
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
			assertThat(this.upstreams.backup().getRequestCount()).isOne();
			assertThat(context.getBean(DeferredQueue.class).counts()).isEqualTo(new DeferredQueue.Counts(1, 0, 1, 0));
		});
	}

	@Test
	void listenerThatThrowsDoesNotUndoACompletion(CapturedOutput output) {
		this.upstreams.primary().enqueue(error(503, "overloaded"));
		this.upstreams.backup().enqueue(error(503, "overloaded"));
		this.upstreams.primary().enqueue(completion("the summary"));
		String[] ticket = new String[1];
		runner().withBean(ThrowingListener.class).run((context) -> {
			ticket[0] = chat(context, deferrable("summarise")).ticket();
			this.time.advanceTimeBy(Duration.ofMinutes(5));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> output.toString().contains("A listener of DeferredRequestCompletedEvent failed"));
			this.time.advanceTimeBy(Duration.ofHours(1));
			DeferredResult result = context.getBean(LlmGateway.class).deferred(ticket[0]).block();
			assertThat(result.state()).isEqualTo(DeferredResult.State.COMPLETED);
			assertThat(result.response().content()).isEqualTo("the summary");
			assertThat(this.time.timers(Duration.ofMinutes(10))).as("background attempts after the completion").isZero();
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
			assertThat(context.getBean(DeferredQueue.class).counts()).isEqualTo(new DeferredQueue.Counts(1, 1, 0, 0));
		});
		assertThat(output).doesNotContain("still pending at shutdown");
	}

	@Test
	void outcomeOfAnEndedRequestIsKeptForTheRetentionThenForgotten() {
		this.upstreams.primary().enqueue(error(503, "overloaded"));
		this.upstreams.backup().enqueue(error(503, "overloaded"));
		this.upstreams.primary().enqueue(completion("the summary"));
		MutableClock clock = MutableClock.at("2026-03-01T12:00:00Z");
		runner().run((context) -> {
			DeferredQueue queue = new DeferredQueue(new InMemoryDeferredStore(Duration.ofHours(1), clock),
					Duration.ofMinutes(5), 3, 10, context, clock);
			LlmGateway gateway = new DefaultLlmGateway(context.getBean(EndpointRegistry.class),
					GatewaySettings.of(Duration.ofSeconds(90)), new Degradation(RouteSelector.DEFAULT, null, queue,
							CallVolumeGuard.off(), BudgetGuard.off(clock), clock),
					List.of(), ObservationRegistry.NOOP);
			String ticket = gateway.chat(deferrable("summarise")).block().ticket();
			this.time.advanceTimeBy(Duration.ofMinutes(5));
			context.getBean(DeferredEvents.class).next(DeferredRequestCompletedEvent.class);

			clock.advance(Duration.ofHours(1));
			assertThat(gateway.deferred(ticket).block().state()).isEqualTo(DeferredResult.State.COMPLETED);
			clock.advance(Duration.ofSeconds(1));
			StepVerifier.create(gateway.deferred(ticket)).verifyComplete();
		});
	}

	@Test
	void unknownTicketHasNoState() {
		runner().run((context) -> StepVerifier.create(context.getBean(LlmGateway.class).deferred("dfr_AAAAAAAAAAAAAAAAAAAAAA"))
			.verifyComplete());
	}

	@Test
	void pastCapacityTheAnswerIsBusyAndEveryAcceptedRequestEndsCompletedOrFailed() {
		runner().withPropertyValues("llm.gateway.deferral.capacity=2").run((context) -> {
			forceOpen(context, "primary", "backup");
			DeferredQueue queue = context.getBean(DeferredQueue.class);
			ChatResponse first = chat(context, deferrable("first"));
			ChatResponse second = chat(context, deferrable("second"));
			ChatResponse third = chat(context, deferrable("third"));
			assertThat(List.of(first.tier(), second.tier(), third.tier()))
				.containsExactly(Tier.DEFERRED, Tier.DEFERRED, Tier.BUSY);
			assertThat(third.content()).isEqualTo("The service is busy right now. Please try again in a minute.");
			assertThat(third.ticket()).isNull();
			assertThat(queue.counts()).isEqualTo(new DeferredQueue.Counts(2, 0, 0, 2));

			// the primary comes back; one request completes, the other is refused
			endpoint(context, "primary").circuitBreaker().transitionToClosedState();
			this.upstreams.primary().enqueue(completion("done"));
			this.upstreams.primary().enqueue(error(400, "invalid_request_error"));
			this.time.advanceTimeBy(Duration.ofMinutes(5));
			DeferredEvents events = context.getBean(DeferredEvents.class);
			assertThat(List.of(events.next(), events.next())).extracting((event) -> event.getClass().getSimpleName())
				.containsExactlyInAnyOrder("DeferredRequestCompletedEvent", "DeferredRequestFailedEvent");
			DeferredQueue.Counts counts = queue.counts();
			assertThat(counts).isEqualTo(new DeferredQueue.Counts(2, 1, 1, 0));
			assertThat(counts.accepted()).isEqualTo(counts.completed() + counts.failed() + counts.pending());
			assertThat(List.of(state(context, first.ticket()), state(context, second.ticket())))
				.containsExactlyInAnyOrder(DeferredResult.State.COMPLETED, DeferredResult.State.FAILED);

			endpoint(context, "primary").circuitBreaker().transitionToForcedOpenState();
			assertThat(chat(context, deferrable("fourth")).tier()).isEqualTo(Tier.DEFERRED);
		});
	}

	@Test
	void nonDeferrableRequestIsNeverDeferred() {
		this.upstreams.primary().enqueue(error(503, "overloaded"));
		this.upstreams.backup().enqueue(error(503, "overloaded"));
		runner().run((context) -> {
			ChatResponse answer = chat(context, ChatRequest.ofUser("interactive question"));
			assertThat(answer.tier()).isEqualTo(Tier.BUSY);
			assertThat(answer.ticket()).isNull();
			assertThat(context.getBean(DeferredQueue.class).counts()).isEqualTo(new DeferredQueue.Counts(0, 0, 0, 0));
		});
	}

	@Test
	void requestBlockedByTheContentFilterIsNotDeferred() {
		this.upstreams.primary().enqueue(json(400, fixture("azure/azure-400-content-filter-error.json")));
		this.upstreams.backup().enqueue(json(200, fixture("azure/azure-200-finish-reason-content-filter.json")));
		runner().run((context) -> {
			ChatResponse answer = chat(context, deferrable("something the filter blocks"));
			assertThat(answer.tier()).isEqualTo(Tier.BUSY);
			assertThat(answer.content())
				.isEqualTo("The request was blocked by the provider's content filter. Please rephrase it.");
			assertThat(answer.finishReason()).isEqualTo("content_filter");
			assertThat(answer.ticket()).isNull();
			assertThat(context.getBean(DeferredQueue.class).counts()).isEqualTo(new DeferredQueue.Counts(0, 0, 0, 0));
		});
	}

	@Test
	void withDeferralDisabledADeferrableRequestGetsBusy() {
		this.upstreams.primary().enqueue(error(503, "overloaded"));
		this.upstreams.backup().enqueue(error(503, "overloaded"));
		runner().withPropertyValues("llm.gateway.deferral.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(DeferredQueue.class);
			ChatResponse answer = chat(context, deferrable("nightly report"));
			assertThat(answer.tier()).isEqualTo(Tier.BUSY);
			assertThat(answer.ticket()).isNull();
			StepVerifier.create(context.getBean(LlmGateway.class).deferred("dfr_AAAAAAAAAAAAAAAAAAAAAA")).verifyComplete();
		});
	}

	@Test
	void pendingRequestsAreCountedAtShutdownWithoutTheirTickets(CapturedOutput output) {
		String[] tickets = new String[2];
		runner().run((context) -> {
			forceOpen(context, "primary", "backup");
			tickets[0] = chat(context, deferrable("one")).ticket();
			tickets[1] = chat(context, deferrable("two")).ticket();
			assertThat(tickets).doesNotContainNull();
			assertThat(output).doesNotContain("still pending at shutdown");
		});
		assertThat(output).contains("WARN").contains("2 deferred LLM request(s) still pending at shutdown");
		// a ticket is a bearer token for the answer: not even part of one is logged
		assertThat(output.getAll()).doesNotContain(tickets[0].substring(4, 16)).doesNotContain(tickets[1].substring(4, 16));
	}

	@Test
	void atMostMaxRetainedEndedRequestsAreKeptTheOldestDroppedFirst() {
		runner().withPropertyValues("llm.gateway.deferral.max-retained=2").run((context) -> {
			forceOpen(context, "primary", "backup");
			List<String> tickets = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				tickets.add(chat(context, deferrable("report " + i)).ticket());
				this.time.advanceTimeBy(Duration.ofMinutes(1));
			}
			endpoint(context, "primary").circuitBreaker().transitionToClosedState();
			DeferredEvents events = context.getBean(DeferredEvents.class);
			for (int i = 0; i < 3; i++) {
				this.upstreams.primary().enqueue(completion("report " + i + " done"));
			}
			// each completes alone (5 minutes after it was deferred), so they end in the order they came
			for (int i = 0; i < 3; i++) {
				this.time.advanceTimeBy(Duration.ofMinutes((i == 0) ? 2 : 1));
				assertThat(events.next(DeferredRequestCompletedEvent.class).getTicket()).isEqualTo(tickets.get(i));
			}
			LlmGateway gateway = context.getBean(LlmGateway.class);
			StepVerifier.create(gateway.deferred(tickets.get(0))).verifyComplete();
			assertThat(gateway.deferred(tickets.get(1)).block().response().content()).isEqualTo("report 1 done");
			assertThat(gateway.deferred(tickets.get(2)).block().response().content()).isEqualTo("report 2 done");
		});
	}

	static class ThrowingListener {

		@EventListener
		void completed(DeferredRequestCompletedEvent event) {
			throw new IllegalStateException("listener bug");
		}

	}

	private static DeferredResult.State state(ApplicationContext context, String ticket) {
		return context.getBean(LlmGateway.class).deferred(ticket).block().state();
	}

	private static void forceOpen(ApplicationContext context, String... endpoints) {
		for (String name : endpoints) {
			endpoint(context, name).circuitBreaker().transitionToForcedOpenState();
		}
	}

}
