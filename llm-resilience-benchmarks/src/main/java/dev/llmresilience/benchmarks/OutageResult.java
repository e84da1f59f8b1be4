package dev.llmresilience.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import dev.llmresilience.benchmarks.OutageReplay.Client;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

/**
 * What one {@link OutageReplay} scenario measured, and how it reads rescaled to real time (x100).
 */
record OutageResult(OutageReplay.Scenario scenario, boolean finished, long outageStart, long outageEnd, long[] scheduled,
		long[] waits, long[] lags, Reply[] replies, List<StubProvider.Arrival> primaryHits,
		List<StubProvider.Arrival> backupHits, List<long[]> transitions, List<long[]> sends) {

	/** First CLOSED -> OPEN at or after the outage's start, else {@code Long.MAX_VALUE}. */
	long openedAt() {
		return this.transitions.stream()
			.filter((t) -> t[0] >= this.outageStart && t[1] == CircuitBreaker.State.OPEN.ordinal())
			.mapToLong((t) -> t[0])
			.min()
			.orElse(Long.MAX_VALUE);
	}

	long halfOpensDuringOutage(long from) {
		return this.transitions.stream()
			.filter((t) -> t[0] >= from && t[0] < this.outageEnd && t[1] == CircuitBreaker.State.HALF_OPEN.ordinal())
			.count();
	}

	long closedAfterRecovery() {
		return this.transitions.stream()
			.filter((t) -> t[0] >= this.outageEnd && t[1] == CircuitBreaker.State.CLOSED.ordinal())
			.mapToLong((t) -> t[0] - this.outageEnd)
			.min()
			.orElse(-1);
	}

	long primaryUsedAgain() {
		return this.primaryHits.stream()
			.filter((hit) -> hit.at() >= this.outageEnd && !hit.down())
			.mapToLong((hit) -> hit.at() - this.outageEnd)
			.min()
			.orElse(-1);
	}

	boolean inOutage(int index) {
		return this.scheduled[index] >= this.outageStart && this.scheduled[index] < this.outageEnd;
	}

	long[] waits(long from, long to) {
		List<Long> selected = new ArrayList<>();
		for (int i = 0; i < this.scheduled.length; i++) {
			if (inOutage(i) && this.scheduled[i] >= from && this.scheduled[i] < to && this.replies[i] != null) {
				selected.add(this.waits[i]);
			}
		}
		return selected.stream().mapToLong(Long::longValue).sorted().toArray();
	}

	long count(long from, long to, boolean answeredOnly) {
		long count = 0;
		for (int i = 0; i < this.scheduled.length; i++) {
			if (inOutage(i) && this.scheduled[i] >= from && this.scheduled[i] < to
					&& (!answeredOnly || (this.replies[i] != null && this.replies[i].answer().answered()))) {
				count++;
			}
		}
		return count;
	}

	long hits(long from, long to) {
		return this.primaryHits.stream().filter((hit) -> hit.down() && hit.at() >= from && hit.at() < to).count();
	}

	/** Calls the gateway put on the wire to the primary in [from, to) of the outage, by breaker state then. */
	long sends(long from, long to, CircuitBreaker.@Nullable State state) {
		return this.sends.stream()
			.filter((send) -> send[0] >= Math.max(from, this.outageStart) && send[0] < Math.min(to, this.outageEnd))
			.filter((send) -> state == null || send[1] == state.ordinal())
			.count();
	}

	/** The most calls put on the wire in one HALF_OPEN period of the outage. */
	long mostProbesInOneHalfOpen() {
		Map<Long, Long> perPeriod = new HashMap<>();
		for (long[] send : this.sends) {
			if (send[0] < this.outageStart || send[0] >= this.outageEnd
					|| send[1] != CircuitBreaker.State.HALF_OPEN.ordinal()) {
				continue;
			}
			long period = this.transitions.stream()
				.filter((t) -> t[0] <= send[0] && t[1] == CircuitBreaker.State.HALF_OPEN.ordinal())
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

	boolean hasBreaker() {
		return this.scenario.client() == Client.GATEWAY_PRIMARY
				|| this.scenario.client() == Client.GATEWAY_PRIMARY_BACKUP;
	}

	void print(@Nullable OutageResult baseline) {
		long opened = openedAt();
		long split = hasBreaker() ? opened : Long.MAX_VALUE;
		long total = count(Long.MIN_VALUE, Long.MAX_VALUE, false);
		long answered = count(Long.MIN_VALUE, Long.MAX_VALUE, true);
		System.out.printf(Locale.ROOT, "requests in the outage window: %d, answered %d (%.1f %%)%s%n", total, answered,
				100.0 * answered / total, this.finished ? "" : " -- NOT ALL FINISHED within 10 s");
		System.out.printf(Locale.ROOT, "primary: %d hits in all, %d during the outage; backup: %d hits%n",
				this.primaryHits.size(), hits(Long.MIN_VALUE, Long.MAX_VALUE), this.backupHits.size());
		long[] lagsSorted = this.lags.clone();
		Arrays.sort(lagsSorted);
		System.out.printf(Locale.ROOT, "firing lag behind schedule (machine stalls, included in the waits): p50 %s, p99 %s, max %s%n",
				ms(LatencyRecorder.percentile(lagsSorted, 50)), ms(LatencyRecorder.percentile(lagsSorted, 99)),
				ms(lagsSorted[lagsSorted.length - 1]));
		if (!busyReasons().isEmpty()) {
			System.out.println("not answered in the outage window, by attempts: " + busyReasons());
		}
		if (hasBreaker()) {
			if (opened == Long.MAX_VALUE) {
				System.out.println("breaker never opened");
			}
			else {
				long halfOpens = halfOpensDuringOutage(opened);
				System.out.printf(Locale.ROOT,
						"breaker opened %s after the outage began (real %s); calls the gateway sent the primary during the outage: %d before it opened, %d after (%d while HALF_OPEN, %d while CLOSED, %d while OPEN); half-open %d times: %d probes allowed, at most %d sent in one half-open period; server arrivals in the outage: %d before, %d after%n",
						ms(opened - this.outageStart), real(opened - this.outageStart), sends(Long.MIN_VALUE, opened, null),
						sends(opened, Long.MAX_VALUE, null), sends(opened, Long.MAX_VALUE, CircuitBreaker.State.HALF_OPEN),
						sends(opened, Long.MAX_VALUE, CircuitBreaker.State.CLOSED),
						sends(opened, Long.MAX_VALUE, CircuitBreaker.State.OPEN), halfOpens, 3 * halfOpens,
						mostProbesInOneHalfOpen(), hits(Long.MIN_VALUE, opened), hits(opened, Long.MAX_VALUE));
			}
			System.out.print("transitions (ms from outage start):");
			this.transitions.forEach((t) -> System.out.printf(Locale.ROOT, " %s@%.1f",
					CircuitBreaker.State.values()[(int) t[1]], (t[0] - this.outageStart) / 1e6));
			System.out.println();
		}
		describe("wait before open", waits(Long.MIN_VALUE, split), count(Long.MIN_VALUE, split, true),
				count(Long.MIN_VALUE, split, false));
		if (hasBreaker() && opened != Long.MAX_VALUE) {
			long[] after = waits(split, Long.MAX_VALUE);
			describe("wait after open ", after, count(split, Long.MAX_VALUE, true), count(split, Long.MAX_VALUE, false));
			if (baseline != null && this.scenario.client() == Client.GATEWAY_PRIMARY_BACKUP) {
				long[] own = baseline.waits(Long.MIN_VALUE, Long.MAX_VALUE);
				double ownMean = LatencyRecorder.mean(own);
				long ownP99 = LatencyRecorder.percentile(own, 99);
				long over = Arrays.stream(after).filter((wait) -> wait > ownP99 * 1.05).count();
				long timedOut = Arrays.stream(after).filter((wait) -> wait >= OutageReplay.NAIVE_TIMEOUT.toNanos() * 9 / 10).count();
				System.out.printf(Locale.ROOT,
						"after open vs the backup's own latency (raw WebClient baseline: mean %s, p99 %s): mean x%.3f, p50 x%.3f, p99 x%.3f; %d of %d waited longer than 1.05 x its p99, %d of them 540 ms or more (a timeout)%n",
						ms(ownMean), ms(ownP99), LatencyRecorder.mean(after) / ownMean,
						(double) LatencyRecorder.percentile(after, 50) / LatencyRecorder.percentile(own, 50),
						(double) LatencyRecorder.percentile(after, 99) / ownP99, over, after.length, timedOut);
			}
		}
		long usedAgain = primaryUsedAgain();
		long closed = closedAfterRecovery();
		if (this.scenario.mode() != null) {
			System.out.printf(Locale.ROOT, "after recovery: primary used again after %s (real %s)%s%n",
					(usedAgain < 0) ? "never" : ms(usedAgain), (usedAgain < 0) ? "-" : real(usedAgain),
					hasBreaker() ? ", breaker CLOSED after " + ((closed < 0) ? "never" : ms(closed) + " (real " + real(closed) + ")") : "");
		}
	}

	String row() {
		long opened = openedAt();
		boolean breaker = hasBreaker() && opened != Long.MAX_VALUE;
		long split = breaker ? opened : Long.MAX_VALUE;
		long[] before = waits(Long.MIN_VALUE, split);
		long[] after = breaker ? waits(split, Long.MAX_VALUE) : new long[0];
		long total = count(Long.MIN_VALUE, Long.MAX_VALUE, false);
		long answered = count(Long.MIN_VALUE, Long.MAX_VALUE, true);
		String hits = breaker ? sends(Long.MIN_VALUE, opened, null) + " / " + sends(opened, Long.MAX_VALUE, null) + " ("
				+ 3 * halfOpensDuringOutage(opened) + ", at most " + mostProbesInOneHalfOpen() + " per half-open)"
				: hits(Long.MIN_VALUE, Long.MAX_VALUE) + " / -";
		long usedAgain = primaryUsedAgain();
		long closed = closedAfterRecovery();
		return String.format(Locale.ROOT, "| %s | %s | %s | %s / %s | %s | %d of %d (%.1f %%) | %s | %s |", this.scenario.name(), hits,
				breaker ? real(opened - this.outageStart) : "-", real(LatencyRecorder.mean(before)),
				real(LatencyRecorder.percentile(before, 99)),
				breaker ? real(LatencyRecorder.mean(after)) + " / " + real(LatencyRecorder.percentile(after, 99)) + " / "
						+ real(after.length > 0 ? after[after.length - 1] : 0) : "-",
				answered, total, 100.0 * answered / total,
				(this.scenario.mode() == null) ? "-" : (usedAgain < 0) ? "never" : real(usedAgain),
				(this.scenario.mode() == null || !hasBreaker()) ? "-" : (closed < 0) ? "never" : real(closed));
	}

	private static void describe(String label, long[] waits, long answered, long total) {
		if (total == 0) {
			System.out.println(label + ": no request");
			return;
		}
		System.out.printf(Locale.ROOT, "%s: %d requests, %d answered; mean %s, p50 %s, p99 %s, max %s (real: mean %s, p99 %s)%n",
				label, total, answered, ms(LatencyRecorder.mean(waits)), ms(LatencyRecorder.percentile(waits, 50)),
				ms(LatencyRecorder.percentile(waits, 99)), ms(waits.length > 0 ? waits[waits.length - 1] : 0),
				real(LatencyRecorder.mean(waits)), real(LatencyRecorder.percentile(waits, 99)));
	}

	private static String ms(double nanos) {
		return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
	}

	/** A scaled duration as it would be in real time (x100). */
	private static String real(double nanos) {
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
	 * How one request ended, and for a BUSY answer why: its attempts' outcomes.
	 * @param answer how it ended
	 * @param why the attempts of a BUSY answer, or the error of a failed call
	 */
	record Reply(Answer answer, @Nullable String why) {

		static Reply of(ChatResponse response) {
			if (response.tier() == Tier.BUSY) {
				return new Reply(Answer.BUSY, response.attempts()
					.stream()
					.map((attempt) -> attempt.endpoint() + ":" + attempt.outcome())
					.collect(Collectors.joining(",")));
			}
			return new Reply("primary".equals(response.endpoint()) ? Answer.PRIMARY : Answer.BACKUP, null);
		}

	}

}
