package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.llmresilience.benchmarks.StubProvider.FailureMode;
import org.jspecify.annotations.Nullable;

/**
 * One run of the {@link OutageReplay}: who the requests go through, what the primary does in the
 * outage, and what happens after it. {@link #ALL} are the runs, in order.
 *
 * @param name its name
 * @param client who the requests go through
 * @param mode what the primary does in the outage, or {@code null} for no outage
 * @param bulkhead the gateway endpoints' max-concurrent-calls (default 50)
 * @param deadlineMillis the gateway's deadline (default the 90 s default, scaled)
 * @param recovery what happens after the outage
 */
record Scenario(String name, Client client, @Nullable FailureMode mode, int bulkhead, long deadlineMillis,
		Recovery recovery) {

	Scenario(String name, Client client, @Nullable FailureMode mode, int bulkhead) {
		this(name, client, mode, bulkhead, OutageReplay.deadline().toMillis(), Recovery.TRAFFIC);
	}

	/** No traffic after the outage: the breaker must close on its own. */
	boolean quiet() {
		return this.recovery != Recovery.TRAFFIC;
	}

	/** Who the requests go through. */
	enum Client {

		/** WebClient, 3 attempts of 60 s (Reactor retry, 500 ms backoff), no breaker, no fallback (real time). */
		NAIVE,

		/** The gateway, route [primary]. */
		GATEWAY_PRIMARY,

		/** The gateway, route [primary, backup]. */
		GATEWAY_PRIMARY_BACKUP,

		/** Baseline: WebClient straight to the backup (the backup's own latency). */
		RAW_BACKUP,

		/** Baseline: the gateway, route [backup]. */
		GATEWAY_BACKUP

	}

	/** What happens after the outage. */
	enum Recovery {

		/** Normal traffic goes on. */
		TRAFFIC,

		/** No traffic at all. */
		QUIET,

		/**
		 * No traffic, and the outage ends 1 s (real) after the primary's first HALF_OPEN in the
		 * outage's last 45 s, so that this half-open's probes are caught in the outage: the worst
		 * moment to recover.
		 */
		UNLUCKY

	}

	static final List<Scenario> ALL = all();

	private static List<Scenario> all() {
		List<Scenario> scenarios = new ArrayList<>(List.of(new Scenario("backup-raw", Client.RAW_BACKUP, null, 50),
				new Scenario("backup-gateway", Client.GATEWAY_BACKUP, null, 50)));
		for (FailureMode mode : FailureMode.values()) {
			String shape = switch (mode) {
				case HANG -> "hang";
				case HTTP_500 -> "500";
				case SLOW_FIRST_TOKEN -> "slow";
			};
			scenarios.add(new Scenario(shape + "-naive", Client.NAIVE, mode, 50));
			scenarios.add(new Scenario(shape + "-gateway-primary", Client.GATEWAY_PRIMARY, mode, 50));
			scenarios.add(new Scenario(shape + "-gateway-backup", Client.GATEWAY_PRIMARY_BACKUP, mode, 50));
			for (Recovery recovery : List.of(Recovery.QUIET, Recovery.UNLUCKY)) {
				scenarios.add(new Scenario(shape + "-gateway-backup-" + recovery.name().toLowerCase(Locale.ROOT),
						Client.GATEWAY_PRIMARY_BACKUP, mode, 50, OutageReplay.deadline().toMillis(), recovery));
			}
			if (mode == FailureMode.HANG) {
				scenarios.add(new Scenario("hang-gateway-backup-bulkhead1000", Client.GATEWAY_PRIMARY_BACKUP, mode, 1000));
				scenarios.add(new Scenario("hang-gateway-backup-deadline130s", Client.GATEWAY_PRIMARY_BACKUP, mode, 50,
						OutageReplay.scaled(Duration.ofSeconds(130)).toMillis(), Recovery.TRAFFIC));
			}
		}
		return List.copyOf(scenarios);
	}

}
