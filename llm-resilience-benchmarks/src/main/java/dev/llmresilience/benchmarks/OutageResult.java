package dev.llmresilience.benchmarks;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import dev.llmresilience.benchmarks.Scenario.Client;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

/**
 * What one {@link OutageReplay} scenario measured, and how it reads rescaled to real time (divided by the scale).
 * {@link OutageReport} prints the details; {@link #row()} is the scenario's line of the summary.
 */
record OutageResult(Scenario scenario, boolean finished, long outageStart, long outageEnd, long[] scheduled,
		long[] waits, long[] lags, Reply[] replies, List<StubProvider.Arrival> primaryHits,
		List<StubProvider.Arrival> backupHits, List<long[]> transitions, List<WatchedClient.Send> sends) {

	static final String HEADER = """
			| scenario | mean wait | p99 wait | answered | BUSY | user requests sent to the primary after it opened (in the outage; while not CLOSED) | primary hits in the outage (of which probes) | outage start -> open | recovery -> primary serves users | recovery -> breaker CLOSED |
			|---|---|---|---|---|---|---|---|---|---|""";

	/** First CLOSED -> OPEN at or after the outage's start, else {@code Long.MAX_VALUE}. */
	long openedAt() {
		return this.transitions.stream()
			.filter((t) -> t[0] >= this.outageStart && t[1] == CircuitBreaker.State.OPEN.ordinal())
			.mapToLong((t) -> t[0])
			.min()
			.orElse(Long.MAX_VALUE);
	}

	boolean opened() {
		return hasBreaker() && openedAt() != Long.MAX_VALUE;
	}

	long halfOpensDuringOutage(long from) {
		return this.transitions.stream()
			.filter((t) -> t[0] >= from && t[0] < this.outageEnd && t[1] == CircuitBreaker.State.HALF_OPEN.ordinal())
			.count();
	}

	/** From the outage's end to the first transition to CLOSED after it, or -1. */
	long closedAfterRecovery() {
		return this.transitions.stream()
			.filter((t) -> t[0] >= this.outageEnd && t[1] == CircuitBreaker.State.CLOSED.ordinal())
			.mapToLong((t) -> t[0] - this.outageEnd)
			.min()
			.orElse(-1);
	}

	/**
	 * From the outage's end to the first user's request sent to the (recovered) primary, or -1: for
	 * the gateway a send that was no probe, for the naive client a server arrival.
	 */
	long primaryServesAgain() {
		if (!hasBreaker()) {
			return this.primaryHits.stream()
				.filter((hit) -> hit.at() >= this.outageEnd && !hit.down())
				.mapToLong((hit) -> hit.at() - this.outageEnd)
				.min()
				.orElse(-1);
		}
		return this.sends.stream()
			.filter((send) -> send.at() >= this.outageEnd && !send.probe())
			.mapToLong((send) -> send.at() - this.outageEnd)
			.min()
			.orElse(-1);
	}

	boolean inOutage(int index) {
		return this.scheduled[index] >= this.outageStart && this.scheduled[index] < this.outageEnd;
	}

	/** Sorted waits of the outage window's requests scheduled in [from, to) that ended. */
	long[] waits(long from, long to) {
		List<Long> selected = new ArrayList<>();
		for (int i = 0; i < this.scheduled.length; i++) {
			if (inOutage(i) && this.scheduled[i] >= from && this.scheduled[i] < to && this.replies[i] != null) {
				selected.add(this.waits[i]);
			}
		}
		return selected.stream().mapToLong(Long::longValue).sorted().toArray();
	}

	/** Requests of the outage window scheduled in [from, to) whose reply passes the test. */
	long count(long from, long to, Predicate<@Nullable Reply> test) {
		long count = 0;
		for (int i = 0; i < this.scheduled.length; i++) {
			if (inOutage(i) && this.scheduled[i] >= from && this.scheduled[i] < to && test.test(this.replies[i])) {
				count++;
			}
		}
		return count;
	}

	long count(long from, long to, boolean answeredOnly) {
		return count(from, to, (reply) -> !answeredOnly || (reply != null && reply.answer().answered()));
	}

	long total() {
		return count(Long.MIN_VALUE, Long.MAX_VALUE, false);
	}

	long answered() {
		return count(Long.MIN_VALUE, Long.MAX_VALUE, true);
	}

	long busy() {
		return count(Long.MIN_VALUE, Long.MAX_VALUE, (reply) -> reply != null && reply.answer() == Answer.BUSY);
	}

	/** Server arrivals at the primary while it was down, probes only or all. */
	long hits(boolean probesOnly) {
		return this.primaryHits.stream().filter((hit) -> hit.down() && (!probesOnly || hit.probe())).count();
	}

	long hits(long from, long to) {
		return this.primaryHits.stream().filter((hit) -> hit.down() && hit.at() >= from && hit.at() < to).count();
	}

	/** Calls the gateway put on the wire to the primary in [from, to) of the outage that pass the test. */
	long sends(long from, long to, Predicate<WatchedClient.Send> test) {
		return this.sends.stream()
			.filter((send) -> send.at() >= Math.max(from, this.outageStart) && send.at() < Math.min(to, this.outageEnd))
			.filter(test)
			.count();
	}

	long sends(long from, long to, CircuitBreaker.@Nullable State state) {
		return sends(from, to, (send) -> state == null || send.state() == state);
	}

	/** Users' requests (no probes) sent to the primary after it first opened, in the outage. */
	long userSendsAfterOpen() {
		return sends(openedAt(), Long.MAX_VALUE, (send) -> !send.probe());
	}

	/** Users' requests sent to the primary while its breaker was not CLOSED, after it first opened (the whole run). */
	long userSendsNotClosed() {
		long opened = openedAt();
		return this.sends.stream()
			.filter((send) -> send.at() >= opened && !send.probe() && send.state() != CircuitBreaker.State.CLOSED)
			.count();
	}

	/**
	 * The most calls put on the wire in one HALF_OPEN period of the outage. The library's probes
	 * may go out before this benchmark's own transition listener has noted the HALF_OPEN that
	 * sent them, so a send belongs to the last HALF_OPEN up to 5 s (real time) after it (the open
	 * state lasts 30 s, so that can be no other).
	 */
	long mostProbesInOneHalfOpen() {
		long slack = OutageReplay.scaled(java.time.Duration.ofSeconds(5)).toNanos();
		Map<Long, Long> perPeriod = new HashMap<>();
		for (WatchedClient.Send send : this.sends) {
			if (send.at() < this.outageStart || send.at() >= this.outageEnd
					|| send.state() != CircuitBreaker.State.HALF_OPEN) {
				continue;
			}
			long period = this.transitions.stream()
				.filter((t) -> t[0] <= send.at() + slack && t[1] == CircuitBreaker.State.HALF_OPEN.ordinal())
				.mapToLong((t) -> t[0])
				.max()
				.orElse(-1);
			perPeriod.merge(period, 1L, Long::sum);
		}
		return perPeriod.values().stream().mapToLong(Long::longValue).max().orElse(0);
	}

	/** Why requests of the outage window got BUSY (or failed): their attempts, most frequent first. */
	String busyReasons() {
		Map<String, Long> reasons = new HashMap<>();
		for (int i = 0; i < this.replies.length; i++) {
			if (inOutage(i) && this.replies[i] != null && !this.replies[i].answer().answered()) {
				reasons.merge(String.valueOf(this.replies[i].why()), 1L, Long::sum);
			}
		}
		return reasons.entrySet()
			.stream()
			.sorted(Map.Entry.<String, Long>comparingByValue().reversed())
			.limit(6)
			.map((entry) -> entry.getValue() + " x [" + entry.getKey() + "]")
			.collect(Collectors.joining("; "));
	}

	/** Every attempt of the whole run (not only the outage window), by endpoint and outcome. */
	String attemptOutcomes() {
		Map<String, Long> outcomes = new java.util.TreeMap<>();
		for (Reply reply : this.replies) {
			if (reply != null) {
				reply.trail().forEach((attempt) -> outcomes.merge(attempt, 1L, Long::sum));
			}
		}
		return outcomes.toString();
	}

	boolean hasBreaker() {
		return this.scenario.client() == Client.GATEWAY_PRIMARY
				|| this.scenario.client() == Client.GATEWAY_PRIMARY_BACKUP;
	}

	/** The scenario's line of the summary table: the figures of the outage's summary, in real time. */
	String row() {
		long[] all = waits(Long.MIN_VALUE, Long.MAX_VALUE);
		long total = total();
		boolean outage = this.scenario.mode() != null;
		boolean opened = opened();
		long servesAgain = primaryServesAgain();
		long closed = closedAfterRecovery();
		return String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", this.scenario.name(),
				real(LatencyRecorder.mean(all)), real(LatencyRecorder.percentile(all, 99)), share(answered(), total),
				share(busy(), total), opened ? userSendsAfterOpen() + "; " + userSendsNotClosed() : "-",
				outage ? hits(false) + " (" + hits(true) + ")" : "-",
				opened ? real(openedAt() - this.outageStart) : hasBreaker() && outage ? "never" : "-",
				(!outage || this.scenario.quiet()) ? "-" : (servesAgain < 0) ? "never" : real(servesAgain),
				!opened ? "-" : (closed < 0) ? "never" : real(closed))
				+ (this.finished ? "" : " NOT ALL FINISHED");
	}

	private static String share(long count, long total) {
		return String.format(Locale.ROOT, "%d (%.1f %%)", count, 100.0 * count / total);
	}

	static String ms(double nanos) {
		return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
	}

	/** A scaled duration as it would be in real time. */
	static String real(double nanos) {
		double seconds = nanos / 1e9 / OutageReplay.SCALE;
		return (seconds < 1) ? String.format(Locale.ROOT, "%.0f ms", seconds * 1000)
				: String.format(Locale.ROOT, "%.1f s", seconds);
	}

	/** How one request ended. */
	enum Answer {

		PRIMARY, BACKUP, BUSY, FAILED;

		boolean answered() {
			return this == PRIMARY || this == BACKUP;
		}

	}

	/**
	 * How one request ended, and for a BUSY answer why.
	 * @param answer how it ended
	 * @param why the attempts of a BUSY answer, or the error of a failed call
	 * @param trail every attempt's endpoint and outcome, for any answer of the gateway
	 */
	record Reply(Answer answer, @Nullable String why, List<String> trail) {

		Reply(Answer answer, @Nullable String why) {
			this(answer, why, List.of());
		}

		static Reply of(ChatResponse response) {
			List<String> trail = response.attempts()
				.stream()
				.map((attempt) -> attempt.endpoint() + ":" + attempt.outcome())
				.toList();
			if (response.tier() == Tier.BUSY) {
				return new Reply(Answer.BUSY, String.join(",", trail), trail);
			}
			return new Reply("primary".equals(response.endpoint()) ? Answer.PRIMARY : Answer.BACKUP, null, trail);
		}

	}

}
