package dev.llmresilience.failure;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

import dev.llmresilience.chat.Outcome;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The stream rows of the failure rules, as the {@link FailureClassifier} decides them.
 */
class StreamClassificationTests {

	private final FailureClassifier classifier = new FailureClassifier(Clock.systemUTC());

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
		Throwable reset = this.classifier.classifyStreamError("a", new IOException("Connection reset"), false, "", null);
		assertThat(FailureClassifier.outcomeOf(reset)).isEqualTo(Outcome.CONNECTION_FAILED);
		assertThat(this.classifier.isRetryable(reset, Duration.ofSeconds(10))).isTrue();
		Throwable slow = this.classifier.classifyStreamError("a", new TimeoutException("first-token-timeout"), false, "",
				null);
		assertThat(FailureClassifier.outcomeOf(slow)).isEqualTo(Outcome.TIMEOUT);
	}

	@Test
	void afterTheFirstChunkAStreamErrorIsAnInterruptionCarryingThePartialText() {
		Throwable broken = this.classifier.classifyStreamError("a", new IOException("Connection reset"), true, "Hel",
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
		Throwable stalled = this.classifier.classifyStreamError("a", new TimeoutException("stream-idle-timeout"), true,
				"Hel", null);
		assertThat(FailureClassifier.outcomeOf(stalled)).isEqualTo(Outcome.STREAM_STALLED);
	}

	@Test
	void anErrorEventAfterTheFirstChunkIsAnInterruptionEvenWhenItsStatusWouldBeRetried() {
		LlmUpstreamException event = new LlmUpstreamException("a", Outcome.SERVER_ERROR, 500, null, "Overloaded", null);
		assertThat(FailureClassifier.outcomeOf(this.classifier.classifyStreamError("a", event, true, "Hel", null)))
			.isEqualTo(Outcome.STREAM_INTERRUPTED);
	}

	@Test
	void afterTheFinishReasonAnErrorEndsTheStreamNormally() {
		assertThat(this.classifier.classifyStreamError("a", new IOException("Connection reset"), true, "Done", "stop"))
			.isNull();
	}

	@Test
	void aStreamThatEndsWithoutContentIsAnEmptyOrFilteredResponse() {
		assertThatExceptionOfType(LlmUpstreamException.class)
			.isThrownBy(() -> this.classifier.classifyStreamEnd("a", false, "stop"))
			.satisfies((ex) -> assertThat(ex.outcome()).isEqualTo(Outcome.EMPTY_RESPONSE));
		assertThatExceptionOfType(LlmUpstreamException.class)
			.isThrownBy(() -> this.classifier.classifyStreamEnd("a", false, "content_filter"))
			.satisfies((ex) -> assertThat(ex.outcome()).isEqualTo(Outcome.CONTENT_FILTERED));
	}

	@Test
	void aStreamThatEndsAfterContentIsASuccessUnlessAFilterCutIt() {
		assertThat(this.classifier.classifyStreamEnd("a", true, "stop")).isEqualTo(Outcome.SUCCESS);
		assertThat(this.classifier.classifyStreamEnd("a", true, null)).isEqualTo(Outcome.SUCCESS);
		assertThat(this.classifier.classifyStreamEnd("a", true, "content_filter")).isEqualTo(Outcome.CONTENT_FILTERED);
	}

	@Test
	void aTruncatedStreamIsAConnectionFailure() {
		LlmUpstreamException truncated = this.classifier.truncatedStream("a");
		assertThat(truncated.outcome()).isEqualTo(Outcome.CONNECTION_FAILED);
		assertThat(truncated).hasMessageContaining("[DONE]");
	}

}
