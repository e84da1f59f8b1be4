package dev.llmresilience.engine;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings.ProviderLimits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A provider's windows as one endpoint's capacity tells them apart, on virtual time. Each answer's
 * reset is read when the answer arrives, later than the provider wrote it, so the window known
 * here ends a little after the provider's: answers of the next window may come before it ends
 * here, and answers of the window just ended after it.
 */
class CapacityWindowsTests {

	private static final ChatRequest REQUEST = ChatRequest.ofUser("hello");

	private final VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();

	private final EndpointCapacity capacity = new EndpointCapacity(
			EndpointSettings.builder("limited", URI.create("http://127.0.0.1:9/v1"), "limited-model").build(),
			Clock.systemUTC());

	@AfterEach
	void resetTime() {
		VirtualTimeScheduler.reset();
	}

	@Test
	void anAnswerOfTheNextWindowBeginsItInsteadOfExtendingTheWindowKnownHere() {
		answer(19, Duration.ofSeconds(1));
		for (int i = 0; i < 18; i++) {
			assertThat(this.capacity.take(REQUEST, now())).as("call " + i).isNotNegative();
		}
		// 950 ms on: the provider's window turned 80 ms ago (its reset read late), and the answer to
		// the first call of the next one says that window has 19 left until a second from then
		this.time.advanceTimeBy(Duration.ofMillis(950));
		answer(19, Duration.ofSeconds(1));
		EndpointCapacity.Known requests = this.capacity.known(EndpointCapacity.Dimension.REQUESTS, now());
		assertThat(requests.remaining()).as("the next window's, not the one left of the last").isEqualTo(19);
		for (int i = 0; i < 19; i++) {
			assertThat(this.capacity.take(REQUEST, now())).as("call " + i + " of the next window").isNotNegative();
		}
		assertThat(this.capacity.take(REQUEST, now())).as("the window spent").isNegative();
	}

	@Test
	void anAnswerOfTheWindowJustEndedDoesNotSpendTheNext() {
		answer(19, Duration.ofSeconds(1));
		for (int i = 0; i < 19; i++) {
			assertThat(this.capacity.take(REQUEST, now())).as("call " + i).isNotNegative();
		}
		assertThat(this.capacity.take(REQUEST, now())).as("the window spent").isNegative();
		// past its reset the window is taken as whole again; then comes the answer to the call that
		// spent the last one, written 10 ms before the provider's window turned
		this.time.advanceTimeBy(Duration.ofMillis(1005));
		answer(0, Duration.ofMillis(10));
		assertThat(this.capacity.known(EndpointCapacity.Dimension.REQUESTS, now()).remaining()).isEqualTo(20);
		assertThat(this.capacity.take(REQUEST, now())).as("the first call of the next window").isNotNegative();
	}

	private void answer(long remaining, Duration reset) {
		this.capacity.limits(new ProviderLimits(new ProviderLimits.Window(20, remaining, reset), null, null, null));
	}

	private long now() {
		return this.time.now(TimeUnit.NANOSECONDS);
	}

}
