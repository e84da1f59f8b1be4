package dev.llmresilience.springai;

import java.io.IOException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmContextLengthExceededException;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.protocol.UpstreamFailures;
import org.junit.jupiter.api.Test;

import org.springframework.ai.retry.NonTransientAiException;
import org.springframework.ai.retry.TransientAiException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The failure rules applied to what Spring AI models throw: the status wherever it is exposed
 * (Spring's HTTP exceptions with their Retry-After, a vendor SDK's {@code statusCode()}, the text of
 * Spring AI's own exceptions), else the kind of failure; never the provider's message.
 */
class SpringAiFailuresTests {

	private static final String SECRET = "sk-proj-abcdefgh12345678";

	private final SpringAiFailures failures = new SpringAiFailures(new UpstreamFailures(Clock.systemUTC()));

	@Test
	void statusesInSpringAiExceptionTextFollowTheirRows() {
		assertThat(outcome(new TransientAiException("HTTP 503 - {\"error\":\"overloaded\"}"))).isEqualTo(Outcome.SERVER_ERROR);
		assertThat(outcome(new NonTransientAiException("HTTP 429 - slow down"))).isEqualTo(Outcome.RATE_LIMITED);
		assertThat(outcome(new NonTransientAiException("HTTP 401 - Incorrect API key provided: " + SECRET)))
			.isEqualTo(Outcome.CONFIGURATION_ERROR);
		assertThat(this.failures.classify("e", new NonTransientAiException("HTTP 400 - bad")))
			.isInstanceOf(LlmInvalidRequestException.class);
	}

	@Test
	void springHttpExceptionsGiveTheirStatusAndRetryAfter() {
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.RETRY_AFTER, "3");
		WebClientResponseException tooMany = WebClientResponseException.create(429, "Too Many Requests", headers,
				"{}".getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
		LlmUpstreamException limited = (LlmUpstreamException) this.failures.classify("e", tooMany);
		assertThat(limited.outcome()).isEqualTo(Outcome.RATE_LIMITED);
		assertThat(limited.retryAfter()).isEqualTo(Duration.ofSeconds(3));
		assertThat(outcome(new HttpServerErrorException(HttpStatus.BAD_GATEWAY))).isEqualTo(Outcome.SERVER_ERROR);
	}

	@Test
	void aVendorSdksStatusCodeAndHeadersAreRead() {
		LlmUpstreamException limited = (LlmUpstreamException) this.failures.classify("e", new SdkServiceException(429));
		assertThat(limited.outcome()).isEqualTo(Outcome.RATE_LIMITED);
		assertThat(limited.retryAfter()).isEqualTo(Duration.ofMillis(1500));
		assertThat(outcome(new SdkServiceException(500))).isEqualTo(Outcome.SERVER_ERROR);
		assertThat(outcome(new RuntimeException("wrapped", new SdkServiceException(403)))).isEqualTo(Outcome.CONFIGURATION_ERROR);
	}

	@Test
	void withoutAStatusTheKindOfFailureDecides() {
		assertThat(outcome(new ResourceAccessException("I/O error", new ConnectException("refused")))).isEqualTo(Outcome.CONNECTION_FAILED);
		assertThat(outcome(new RuntimeException(new TimeoutException()))).isEqualTo(Outcome.TIMEOUT);
		assertThat(outcome(new TransientAiException("temporarily unavailable"))).isEqualTo(Outcome.SERVER_ERROR);
		assertThat(outcome(new NonTransientAiException("no such model"))).isEqualTo(Outcome.CONFIGURATION_ERROR);
		assertThat(outcome(new IllegalStateException("odd"))).isEqualTo(Outcome.CONNECTION_FAILED);
	}

	@Test
	void theProvidersMessageIsNeverRepeated() {
		for (RuntimeException error : List.of(new NonTransientAiException("HTTP 401 - key " + SECRET),
				new TransientAiException("failed for " + SECRET), new RuntimeException(SECRET, new IOException(SECRET)))) {
			Throwable classified = this.failures.classify("e", error);
			assertThat(classified.getMessage()).doesNotContain(SECRET);
			assertThat(classified.getCause()).isNull();
		}
	}

	@Test
	void classifiedFailuresPassUnchanged() {
		LlmContextLengthExceededException tooLong = new LlmContextLengthExceededException("too long", "e", 400, "context_length_exceeded");
		assertThat(this.failures.classify("e", tooLong)).isSameAs(tooLong);
	}

	private Outcome outcome(Throwable error) {
		return FailureClassifier.outcomeOf(this.failures.classify("e", error));
	}

	/** Shaped as the OpenAI and Anthropic SDKs' service exceptions: {@code statusCode()} and {@code headers().values(name)}. */
	public static final class SdkServiceException extends RuntimeException {

		private final int status;

		SdkServiceException(int status) {
			super("service said " + status + " for " + SECRET);
			this.status = status;
		}

		public int statusCode() {
			return this.status;
		}

		public SdkHeaders headers() {
			return new SdkHeaders();
		}

	}

	/** Shaped as the SDKs' headers. */
	public static final class SdkHeaders {

		public List<String> values(String name) {
			return "retry-after-ms".equals(name) ? List.of("1500") : List.of();
		}

	}

}
