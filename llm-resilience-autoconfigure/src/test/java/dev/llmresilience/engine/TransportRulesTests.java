package dev.llmresilience.engine;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.MockResponse;
import mockwebserver3.SocketEffect;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.completionBody;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/failure-rules.md, the rows about the transport: refused connections, response timeouts and
 * connections closed under the response are retried, counted, and then fall back.
 */
class TransportRulesTests {

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
	void connectionRefusedIsRetriedCountedThenFallsBack() throws IOException {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closedPort = socket.getLocalPort();
		}
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.base-url=http://127.0.0.1:" + closedPort + "/v1")
			.run((context) -> {
				ChatResponse response = chat(context);
				assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
				assertThat(response.content()).isEqualTo("from backup");
				assertThat(response.attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.CONNECTION_FAILED, Outcome.CONNECTION_FAILED, Outcome.CONNECTION_FAILED,
							Outcome.SUCCESS);
				assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
			});
	}

	@Test
	void responseTimeoutIsRetriedCountedThenFallsBack() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary()
				.enqueue(new MockResponse.Builder(completion("too late")).headersDelay(3, TimeUnit.SECONDS).build());
		}
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.timeout=200ms").run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.TIMEOUT, Outcome.TIMEOUT, Outcome.TIMEOUT, Outcome.SUCCESS);
			assertThat(response.attempts().get(0).duration()).isGreaterThanOrEqualTo(Duration.ofMillis(200))
				.isLessThan(Duration.ofSeconds(3));
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

	@Test
	void connectionClosedBeforeTheResponseIsRetriedCountedThenFallsBack() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary()
				.enqueue(new MockResponse.Builder(completion("never sent")).onResponseStart(new SocketEffect.CloseSocket())
					.build());
		}
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.CONNECTION_FAILED, Outcome.CONNECTION_FAILED, Outcome.CONNECTION_FAILED,
						Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

	@Test
	void connectionClosedInTheMiddleOfTheBodyIsRetriedCountedThenFallsBack() {
		String body = completionBody("x".repeat(20_000));
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary()
				.enqueue(new MockResponse.Builder(completion("ignored")).body(body)
					.throttleBody(4096, 1, TimeUnit.MILLISECONDS)
					.onResponseBody(new SocketEffect.CloseSocket())
					.build());
		}
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.CONNECTION_FAILED, Outcome.CONNECTION_FAILED, Outcome.CONNECTION_FAILED,
						Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

}
