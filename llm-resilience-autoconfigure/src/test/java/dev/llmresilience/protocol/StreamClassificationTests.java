package dev.llmresilience.protocol;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.failure.LlmUpstreamException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The stream rows of the failure rules: what {@link UpstreamFailures} makes of a stream's end or break,
 * and what the {@link FailureClassifier} then decides.
 */
class StreamClassificationTests {

	private final UpstreamFailures failures = new UpstreamFailures(Clock.systemUTC());

	private final FailureClassifier classifier = new FailureClassifier();

	@Test
	void brokenAndStalledStreamsAreBreakerFailuresThatAreNeitherRetriedNorFallenBackFrom() {
		for (Outcome outcome : new Outcome[] { Outcome.STREAM_INTERRUPTED, Outcome.STREAM_STALLED }) {
			assertThat(outcome.isRetryable()).isFalse();
			assertThat(outcome.isBreakerFailure()).isTrue();
			assertThat(outcome.action()).isEqualTo(Outcome.Action.SURFACE);
		}
	}

	@Test
	void beforeTheFirstChunkAStreamErrorIsClassifiedLikeAnyCallAndRetried() {
		Throwable reset = this.failures.classifyStreamError("a", new IOException("Connection reset"), false, "", null);
		assertThat(FailureClassifier.outcomeOf(reset)).isEqualTo(Outcome.CONNECTION_FAILED);
		assertThat(this.classifier.isRetryable(reset, Duration.ofSeconds(10))).isTrue();
		Throwable slow = this.failures.classifyStreamError("a", new TimeoutException("first-token-timeout"), false, "",
				null);
		assertThat(FailureClassifier.outcomeOf(slow)).isEqualTo(Outcome.TIMEOUT);
	}

	@Test
	void afterTheFirstChunkAStreamErrorIsAnInterruptionCarryingThePartialText() {
		Throwable broken = this.failures.classifyStreamError("a", new IOException("Connection reset"), true, "Hel",
				null);
		assertThat(broken).isInstanceOf(LlmStreamInterruptedException.class);
		LlmStreamInterruptedException interrupted = (LlmStreamInterruptedException) broken;
		assertThat(interrupted.outcome()).isEqualTo(Outcome.STREAM_INTERRUPTED);
		assertThat(interrupted.partial()).isEqualTo("Hel");
		assertThat(interrupted.endpoint()).isEqualTo("a");
		assertThat(FailureClassifier.outcomeOf(interrupted.getCause())).isEqualTo(Outcome.CONNECTION_FAILED);
		assertThat(this.classifier.isRetryable(broken, Duration.ofSeconds(10))).isFalse();
		assertThat(this.classifier.isBreakerFailure(broken)).isTrue();
	}

	@Test
	void afterTheFirstChunkSilenceIsAStall() {
		Throwable stalled = this.failures.classifyStreamError("a", new TimeoutException("stream-idle-timeout"), true,
				"Hel", null);
		assertThat(FailureClassifier.outcomeOf(stalled)).isEqualTo(Outcome.STREAM_STALLED);
	}

	@Test
	void anErrorEventAfterTheFirstChunkIsAnInterruptionEvenWhenItsStatusWouldBeRetried() {
		LlmUpstreamException event = new LlmUpstreamException("a", Outcome.SERVER_ERROR, 500, null, "Overloaded", null);
		assertThat(FailureClassifier.outcomeOf(this.failures.classifyStreamError("a", event, true, "Hel", null)))
			.isEqualTo(Outcome.STREAM_INTERRUPTED);
	}

	@Test
	void afterTheFinishReasonAnErrorEndsTheStreamNormally() {
		assertThat(this.failures.classifyStreamError("a", new IOException("Connection reset"), true, "Done", "stop"))
			.isNull();
	}

	@Test
	void aStreamThatEndsWithoutContentIsAnEmptyOrFilteredResponse() {
		assertThatExceptionOfType(LlmUpstreamException.class)
			.isThrownBy(() -> this.failures.classifyStreamEnd("a", false, "stop"))
			.satisfies((ex) -> assertThat(ex.outcome()).isEqualTo(Outcome.EMPTY_RESPONSE));
		assertThatExceptionOfType(LlmUpstreamException.class)
			.isThrownBy(() -> this.failures.classifyStreamEnd("a", false, "content_filter"))
			.satisfies((ex) -> assertThat(ex.outcome()).isEqualTo(Outcome.CONTENT_FILTERED));
	}

	@Test
	void aStreamThatEndsAfterContentIsASuccessUnlessAFilterCutIt() {
		assertThat(this.failures.classifyStreamEnd("a", true, "stop")).isEqualTo(Outcome.SUCCESS);
		assertThat(this.failures.classifyStreamEnd("a", true, null)).isEqualTo(Outcome.SUCCESS);
		assertThat(this.failures.classifyStreamEnd("a", true, "content_filter")).isEqualTo(Outcome.CONTENT_FILTERED);
	}

	@Test
	void aTruncatedStreamIsAConnectionFailure() {
		LlmUpstreamException truncated = this.failures.truncatedStream("a");
		assertThat(truncated.outcome()).isEqualTo(Outcome.CONNECTION_FAILED);
		assertThat(truncated).hasMessageContaining("[DONE]");
	}

}
