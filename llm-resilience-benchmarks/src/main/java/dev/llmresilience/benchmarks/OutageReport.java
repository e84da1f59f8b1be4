package dev.llmresilience.benchmarks;

import java.util.Arrays;
import java.util.Locale;

import dev.llmresilience.benchmarks.Scenario.Client;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

import static dev.llmresilience.benchmarks.OutageResult.ms;
import static dev.llmresilience.benchmarks.OutageResult.real;

/**
 * Prints the details of one {@link OutageResult}: counts, the breaker's transitions, the waits
 * before and after it opened, and after recovery. The summary's line is {@link OutageResult#row()}.
 */
final class OutageReport {

	private OutageReport() {
	}

	static void print(OutageResult result, @Nullable OutageResult baseline) {
		long opened = result.openedAt();
		long split = result.hasBreaker() ? opened : Long.MAX_VALUE;
		long total = result.total();
		System.out.printf(Locale.ROOT, "requests in the outage window: %d, answered %d (%.1f %%), BUSY %d%s%n", total,
				result.answered(), 100.0 * result.answered() / total, result.busy(),
				result.finished() ? "" : " -- NOT ALL FINISHED within 10 s");
		System.out.printf(Locale.ROOT, "primary: %d hits in all, %d during the outage (%d of them probes); backup: %d hits%n",
				result.primaryHits().size(), result.hits(false), result.hits(true), result.backupHits().size());
		long[] lags = result.lags().clone();
		Arrays.sort(lags);
		System.out.printf(Locale.ROOT, "firing lag behind schedule (machine stalls, included in the waits): p50 %s, p99 %s, max %s%n",
				ms(LatencyRecorder.percentile(lags, 50)), ms(LatencyRecorder.percentile(lags, 99)), ms(lags[lags.length - 1]));
		System.out.println("attempts of the whole run, by endpoint and outcome: " + result.attemptOutcomes());
		if (!result.busyReasons().isEmpty()) {
			System.out.println("not answered in the outage window, by attempts: " + result.busyReasons());
		}
		if (result.hasBreaker()) {
			breaker(result, opened);
		}
		long[] all = result.waits(Long.MIN_VALUE, Long.MAX_VALUE);
		describe("wait, all       ", all, result.answered(), total);
		describe("wait before open", result.waits(Long.MIN_VALUE, split), result.count(Long.MIN_VALUE, split, true),
				result.count(Long.MIN_VALUE, split, false));
		if (result.opened()) {
			long[] after = result.waits(split, Long.MAX_VALUE);
			describe("wait after open ", after, result.count(split, Long.MAX_VALUE, true),
					result.count(split, Long.MAX_VALUE, false));
			if (baseline != null && result.scenario().client() == Client.GATEWAY_PRIMARY_BACKUP) {
				againstBaseline(after, baseline);
			}
		}
		if (result.scenario().mode() != null) {
			long again = result.primaryServesAgain();
			long closed = result.closedAfterRecovery();
			System.out.printf(Locale.ROOT, "after recovery: primary serves users again after %s%s%n",
					result.scenario().quiet() ? "- (no traffic)" : (again < 0) ? "never" : ms(again) + " (real " + real(again) + ")",
					result.hasBreaker() ? ", breaker CLOSED after "
							+ ((closed < 0) ? "never" : ms(closed) + " (real " + real(closed) + ")") : "");
		}
	}

	private static void breaker(OutageResult result, long opened) {
		if (opened == Long.MAX_VALUE) {
			System.out.println("breaker never opened");
		}
		else {
			long halfOpens = result.halfOpensDuringOutage(opened);
			System.out.printf(Locale.ROOT,
					"breaker opened %s after the outage began (real %s); calls the gateway sent the primary during the outage: %d before it opened, "
							+ "%d after (%d while HALF_OPEN, %d while CLOSED, %d while OPEN; %d users' requests, %d probes); half-open %d times, "
							+ "at most %d calls sent in one half-open period; users' requests sent while not CLOSED, whole run: %d; "
							+ "server arrivals in the outage: %d before, %d after%n",
					ms(opened - result.outageStart()), real(opened - result.outageStart()),
					result.sends(Long.MIN_VALUE, opened, (CircuitBreaker.State) null),
					result.sends(opened, Long.MAX_VALUE, (CircuitBreaker.State) null),
					result.sends(opened, Long.MAX_VALUE, CircuitBreaker.State.HALF_OPEN),
					result.sends(opened, Long.MAX_VALUE, CircuitBreaker.State.CLOSED),
					result.sends(opened, Long.MAX_VALUE, CircuitBreaker.State.OPEN), result.userSendsAfterOpen(),
					result.sends(opened, Long.MAX_VALUE, WatchedClient.Send::probe), halfOpens,
					result.mostProbesInOneHalfOpen(), result.userSendsNotClosed(), result.hits(Long.MIN_VALUE, opened),
					result.hits(opened, Long.MAX_VALUE));
		}
		System.out.print("transitions (ms from outage start):");
		result.transitions()
			.forEach((t) -> System.out.printf(Locale.ROOT, " %s@%.1f", CircuitBreaker.State.values()[(int) t[1]],
					(t[0] - result.outageStart()) / 1e6));
		System.out.println();
	}

	private static void againstBaseline(long[] after, OutageResult baseline) {
		long[] own = baseline.waits(Long.MIN_VALUE, Long.MAX_VALUE);
		double ownMean = LatencyRecorder.mean(own);
		long ownP99 = LatencyRecorder.percentile(own, 99);
		long over = Arrays.stream(after).filter((wait) -> wait > ownP99 * 1.05).count();
		System.out.printf(Locale.ROOT,
				"after open vs the backup's own latency (raw WebClient baseline: mean %s, p99 %s): mean x%.3f, p50 x%.3f, p99 x%.3f; "
						+ "%d of %d waited longer than 1.05 x its p99%n",
				ms(ownMean), ms(ownP99), LatencyRecorder.mean(after) / ownMean,
				(double) LatencyRecorder.percentile(after, 50) / LatencyRecorder.percentile(own, 50),
				(double) LatencyRecorder.percentile(after, 99) / ownP99, over, after.length);
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

}
