package dev.llmresilience.redis;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A deferred request's name in Redis, as whoever lists the keys sees it: the SHA-256 of its ticket
 * in base64url without padding (so {@code redis-cli} and other replicas name it alike), one per
 * ticket, and never the ticket.
 */
class TicketDigestTests {

	@Test
	void aTicketIsNamedByItsSha256InBase64Url() {
		String ticket = "dfr_AAAAAAAAAAAAAAAAAAAAAA";
		// sha256sum of the ticket, base64url: '-' and '_' where base64 has '+' and '/', and no '='
		assertThat(TicketDigest.of(ticket)).isEqualTo("tLIx5Aa4h-44tt9Up091JWCmR9Fbrch5RG_nggSIwfQ")
			.doesNotContain("AAAAAAAAAAAAAAAAAAAAAA");
		assertThat(TicketDigest.of("dfr_AAAAAAAAAAAAAAAAAAAAAB")).isNotEqualTo(TicketDigest.of(ticket));
	}

}
