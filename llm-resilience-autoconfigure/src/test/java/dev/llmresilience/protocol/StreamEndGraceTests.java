package dev.llmresilience.protocol;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmresilience.protocol.StreamLimits.StreamEnd;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The grace a stream's body has to end after its last event ({@link StreamEnd}), in virtual time:
 * a body left open is cut when its grace is over, each at its own time, and the bodies that end
 * right after their last event, as nearly all do, set no task of their own on the scheduler.
 */
class StreamEndGraceTests {

	@Test
	void aThousandBodiesEndedRightAfterTheirLastEventArmOneTaskBetweenThem() {
		AtomicLong tasks = new AtomicLong();
		StepVerifier.withVirtualTime(() -> Flux.range(0, 1000).concatMap((i) -> body(Flux.just("a", "[DONE]", "tail"))).count())
			.expectNext(1000L)
			.then(() -> tasks.set(StreamLimits.Graces.on(Schedulers.parallel()).tasks()))
			.thenAwait(StreamEnd.GRACE)
			.then(() -> {
				StreamLimits.Graces graces = StreamLimits.Graces.on(Schedulers.parallel());
				assertThat(graces.waiting()).isZero();
				assertThat(graces.tasks()).as("nothing left to arm for once the task woke").isEqualTo(1);
			})
			.verifyComplete();
		assertThat(tasks).as("tasks set on the scheduler by 1,000 graces").hasValue(1);
	}

	@Test
	void aBodyLeftOpenAfterItsLastEventIsCutWhenItsGraceIsOver() {
		StepVerifier.withVirtualTime(() -> body(Flux.just("a", "[DONE]").concatWith(Flux.never())))
			.expectNext("a")
			.expectNoEvent(StreamEnd.GRACE.minusMillis(1))
			.thenAwait(Duration.ofMillis(1))
			.verifyComplete();
	}

	@Test
	void bodiesLeftOpenAreCutEachAtItsOwnGraceAndTheOnesThatEndedAreNot() {
		Flux<String> open = Flux.just("a", "[DONE]").concatWith(Flux.never());
		StepVerifier.withVirtualTime(() -> body(open).map((s) -> "first")
			.mergeWith(body(Flux.just("b", "[DONE]", "tail")).map((s) -> "ended"))
			.mergeWith(Flux.just("c").delayElements(Duration.ofMillis(500)).thenMany(body(open)).map((s) -> "second")))
			.expectNext("first", "ended")
			.expectNoEvent(Duration.ofMillis(500))
			.expectNext("second")
			.expectNoEvent(Duration.ofMillis(500))
			.then(() -> assertThat(StreamLimits.Graces.on(Schedulers.parallel()).waiting()).as("first cut").isEqualTo(1))
			.expectNoEvent(Duration.ofMillis(499))
			.thenAwait(Duration.ofMillis(1))
			.verifyComplete();
		assertThat(StreamLimits.Graces.on(Schedulers.parallel()).waiting()).isZero();
	}

	// a body read as a reader reads it: what comes after [DONE] is ignored, the grace starts at it
	private static Flux<String> body(Flux<String> events) {
		return Flux.defer(() -> {
			StreamEnd end = new StreamEnd();
			return end.bounded(events.<String>handle((event, sink) -> {
				if (end.isReached()) {
					return;
				}
				if (event.equals("[DONE]")) {
					end.reached();
				}
				else {
					sink.next(event);
				}
			}));
		});
	}

}
