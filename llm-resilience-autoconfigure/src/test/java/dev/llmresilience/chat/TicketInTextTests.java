package dev.llmresilience.chat;

import java.time.Duration;
import java.util.List;

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
		ChatResponse deferred = new ChatResponse("later", null, null, Tier.DEFERRED, null, List.of(), null, null,
				Duration.ofMillis(12), List.of(), TICKET, null);
		assertThat(deferred.toString()).doesNotContain(TICKET).contains("ticket=(hidden)").contains("tier=DEFERRED");
		assertThat(deferred.ticket()).isEqualTo(TICKET);
	}

	@Test
	void aDeferredResultShowsItsStateButNotItsTicket() {
		ChatResponse answer = new ChatResponse("done", "primary", "m", Tier.DEFERRED, "stop", List.of(), null, null,
				Duration.ofMillis(5), List.of(), TICKET, null);
		DeferredResult result = new DeferredResult(TICKET, DeferredResult.State.COMPLETED, answer, null, true);
		assertThat(result.toString()).doesNotContain(TICKET).contains("state=COMPLETED").contains("durable=true");
	}

}
