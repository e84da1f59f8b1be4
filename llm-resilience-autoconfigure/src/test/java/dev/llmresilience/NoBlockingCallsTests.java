package dev.llmresilience;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import dev.llmresilience.support.NoBlockingCalls;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * BlockHound is on for every test of this module: a blocking call on a Reactor non-blocking thread
 * raises its error where it is made, and fails the test even when the code under test swallows the
 * error; a thread made for blocking work may still block.
 */
class NoBlockingCallsTests {

	private final MockWebServer server = new MockWebServer();

	@AfterEach
	void close() {
		this.server.close();
	}

	@Test
	void sleepOnTheParallelSchedulerRaisesBlockHoundsError() {
		StepVerifier.create(Mono.fromCallable(NoBlockingCallsTests::sleep).subscribeOn(Schedulers.parallel()))
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(BlockingOperationError.class)
				.hasMessageContaining("java.lang.Thread.sleep"))
			.verify(Duration.ofSeconds(10));
		assertThat(NoBlockingCalls.take()).hasSize(1);
	}

	@Test
	void sleepOnAReactorNettyEventLoopRaisesBlockHoundsError() throws Exception {
		this.server.enqueue(new MockResponse.Builder().code(200).body("answer").build());
		this.server.start();
		AtomicReference<String> thread = new AtomicReference<>();
		Mono<String> answer = WebClient.create(this.server.url("/").toString())
			.get()
			.retrieve()
			.bodyToMono(String.class)
			.map((body) -> {
				thread.set(Thread.currentThread().getName());
				sleep();
				return body;
			});
		StepVerifier.create(answer)
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(BlockingOperationError.class)
				.hasMessageContaining("java.lang.Thread.sleep"))
			.verify(Duration.ofSeconds(10));
		assertThat(thread.get()).startsWith("reactor-http-");
		assertThat(NoBlockingCalls.take()).hasSize(1);
	}

	@Test
	void aBlockingCallWhoseErrorIsSwallowedStillFailsTheTest() {
		StepVerifier
			.create(Mono.fromCallable(NoBlockingCallsTests::sleep)
				.subscribeOn(Schedulers.parallel())
				.onErrorResume((error) -> Mono.just("fallback")))
			.expectNext("fallback")
			.verifyComplete();
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> NoBlockingCalls.failIfAnyFound("this test"))
			.withMessageContaining("1 blocking call(s) on a Reactor non-blocking thread during this test")
			// the JDK's blocking native: Thread.sleep on 17, Thread.sleepNanos0 on 21+
			.withMessageMatching("(?s).*java\\.lang\\.Thread\\.sleep\\w* on parallel-.*")
			.withMessageContaining(NoBlockingCallsTests.class.getName())
			.satisfies((failure) -> assertThat(failure.getSuppressed()).singleElement()
				.isInstanceOf(BlockingOperationError.class));
		assertThat(NoBlockingCalls.take()).isEmpty();
	}

	@Test
	void aThreadForBlockingWorkMayBlock() {
		StepVerifier.create(Mono.fromCallable(NoBlockingCallsTests::sleep).subscribeOn(Schedulers.boundedElastic()))
			.expectNext("slept")
			.verifyComplete();
		List<BlockingOperationError> found = NoBlockingCalls.take();
		assertThat(found).isEmpty();
	}

	private static String sleep() {
		try {
			Thread.sleep(1);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		return "slept";
	}

}
