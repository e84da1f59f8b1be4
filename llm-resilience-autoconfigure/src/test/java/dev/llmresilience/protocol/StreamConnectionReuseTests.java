package dev.llmresilience.protocol;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.StreamLimits.StreamEnd;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.Wire;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stream's last event ({@code [DONE]}, {@code message_stop}) comes just before its HTTP body's
 * last chunk. Reading on to the body's end keeps the connection for the next call; a reader that
 * stopped at the last event cancelled the body, and every call, chat (sent upstream as a stream)
 * or stream, opened a new connection: against a real provider, a TCP and TLS handshake per call.
 * Over real local HTTP, with the body's last chunk 20 ms after the last event.
 */
class StreamConnectionReuseTests {

	private FakeUpstream upstreams;

	@AfterEach
	void stop() {
		if (this.upstreams != null) {
			this.upstreams.close();
		}
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void chatsAndStreamsOfOneEndpointShareOneConnection(Wire wire) throws Exception {
		this.upstreams = FakeUpstream.start(wire);
		MockWebServer primary = this.upstreams.primary();
		String body = wire.stream("Hello", " world");
		for (int i = 0; i < 6; i++) {
			// chunked, throttled: the body's terminating chunk arrives after the last event
			primary.enqueue(new MockResponse.Builder().code(200)
				.setHeader("Content-Type", "text/event-stream")
				.chunkedBody(body, 256)
				.throttleBody(256, 20, TimeUnit.MILLISECONDS)
				.build());
		}
		this.upstreams.runner().run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			for (int i = 0; i < 3; i++) {
				assertThat(chat(context).content()).isEqualTo("Hello world");
				List<ChatChunk> chunks = gateway.stream(ChatRequest.ofUser("hi")).collectList().block(Duration.ofSeconds(10));
				assertThat(chunks).allMatch((chunk) -> chunk.tier() == Tier.PRIMARY);
				assertThat(chunks.stream().map(ChatChunk::content).collect(Collectors.joining())).isEqualTo("Hello world");
			}
			List<Integer> connections = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				RecordedRequest request = primary.takeRequest(5, TimeUnit.SECONDS);
				assertThat(request).isNotNull();
				connections.add(request.getConnectionIndex());
			}
			// one connection, or two when a call asks for one while the last is still being given back
			// to the pool; without reading to the body's end it is six, one per call
			assertThat(new HashSet<>(connections)).as("the connections the six calls arrived on: " + connections)
				.hasSizeLessThanOrEqualTo(2);
		});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void aBodyLeftOpenAfterTheLastEventIsCutAfterTheGraceAndTheAnswerStands(Wire wire) throws Exception {
		this.upstreams = FakeUpstream.start(wire);
		CountDownLatch stall = new CountDownLatch(1);
		this.upstreams.primary().enqueue(Answers.sse(Answers.Ending.STALL, stall, wire.stream("Hello", " world")));
		try {
			this.upstreams.runner().run((context) -> {
				long start = System.nanoTime();
				ChatResponse answer = chat(context);
				Duration took = Duration.ofNanos(System.nanoTime() - start);
				assertThat(answer.tier()).isEqualTo(Tier.PRIMARY);
				assertThat(answer.content()).isEqualTo("Hello world");
				assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
				// the grace, not the stream's idle timeout (30 s), ended the wait
				assertThat(took).isGreaterThanOrEqualTo(StreamEnd.GRACE).isLessThan(Duration.ofSeconds(10));
			});
		}
		finally {
			stall.countDown();
		}
	}

}
