package dev.llmresilience.chat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A ticket is a bearer token for a deferred answer: the types that carry it to the caller never
 * show it in their text, which is what ends up in logs.
 */
class TicketInTextTests {

	private static final String TICKET = "tK3f9Qz0aB7xYw2LmN5pRs";

	@Test
	void aDeferredAnswerSaysItHasATicketWithoutShowingIt() {
		ChatResponse deferred = ChatResponse.builder()
			.content("later")
			.tier(Tier.DEFERRED)
			.latency(Duration.ofMillis(12))
			.ticket(TICKET)
			.build();
		assertThat(deferred.toString()).doesNotContain(TICKET).contains("ticket=(hidden)").contains("tier=DEFERRED");
		assertThat(deferred.ticket()).isEqualTo(TICKET);
	}

	@Test
	void aDeferredResultShowsItsStateButNotItsTicket() {
		ChatResponse answer = ChatResponse.builder()
			.content("done")
			.endpoint("primary")
			.model("m")
			.tier(Tier.DEFERRED)
			.finishReason("stop")
			.latency(Duration.ofMillis(5))
			.ticket(TICKET)
			.build();
		DeferredResult result = new DeferredResult(TICKET, DeferredResult.State.COMPLETED, answer, null, true);
		assertThat(result.toString()).doesNotContain(TICKET).contains("state=COMPLETED").contains("durable=true");
	}

}
