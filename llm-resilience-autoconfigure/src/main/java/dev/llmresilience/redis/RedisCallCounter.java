package dev.llmresilience.redis;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

import dev.llmresilience.spi.SharedState.CallCounter;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The call-volume guard's count, fleet-wide, without a call ever waiting on Redis. Windows are
 * fixed and aligned to the clock (an hour-long window starts on the hour, the same for every
 * replica). Each replica spends permits it took from Redis beforehand in small batches
 * ({@code max/100}, 1 to 50) and tops its stock up to two batches in the background once only one
 * is left;
 * Redis never hands out more than the window's limit, and shrinks the batch as the window runs
 * out ({@code guard-reserve.lua}).
 *
 * <p>A call that finds the stock empty (a burst faster than one Redis round trip, the first call
 * of a window, or Redis unavailable) goes ahead on credit while the fleet, as last heard, had
 * permits left (near the window's end, not while a reservation is under way); the credit is
 * settled in Redis with the next report, and reports are numbered so
 * that one sent again after a lost reply is applied once. What "exact" means, then: every call
 * made is counted once in the fleet's window; the fleet makes no more calls than the limit while
 * Redis is reachable, except for calls on credit made in the round trip in which the window's last
 * permits went; while Redis is unreachable each replica allows itself what the fleet had left when
 * it last heard, and its calls are counted when Redis is back.
 */
final class RedisCallCounter implements CallCounter, AutoCloseable {

	private static final RedisScript<List> RESERVE = RedisScripts.load("guard-reserve", List.class);

	private final RedisFleet fleet;

	private final int maxCalls;

	private final long windowMillis;

	private final String name;

	private final Clock clock;

	private final int batch;

	private long window = -1;

	private int stock;

	private int credit;

	private int unreported;

	private long fleetGranted;

	private long fleetUsed;

	private boolean exhausted;

	private boolean reserving;

	private long reports;

	/** A report sent whose reply was lost: sent again, as it is, before any other. */
	private @Nullable Report unacknowledged;

	private record Report(long window, long number, int wanted, int owed, int calls) {
	}

	/**
	 * Create a counter.
	 * @param fleet this replica's seat in the fleet
	 * @param maxCalls calls allowed per window, fleet-wide
	 * @param window the window's length
	 * @param clock the clock the windows are aligned to
	 */
	public RedisCallCounter(RedisFleet fleet, int maxCalls, Duration window, Clock clock) {
		this(fleet, "guard", maxCalls, window, clock);
	}

	/**
	 * Create a counter of its own name.
	 * @param fleet this replica's seat in the fleet
	 * @param name names its keys (the call-volume guard's are {@code guard})
	 * @param maxCalls calls allowed per window, fleet-wide
	 * @param window the window's length
	 * @param clock the clock the windows are aligned to
	 */
	RedisCallCounter(RedisFleet fleet, String name, int maxCalls, Duration window, Clock clock) {
		this(fleet, name, maxCalls, window, clock, Math.max(1, Math.min(50, maxCalls / 100)));
	}

	/**
	 * Create a counter of its own name and batch.
	 * @param fleet this replica's seat in the fleet
	 * @param name names its keys
	 * @param maxCalls permits per window, fleet-wide
	 * @param window the window's length
	 * @param clock the clock the windows are aligned to
	 * @param batch the permits taken from Redis at a time
	 */
	RedisCallCounter(RedisFleet fleet, String name, int maxCalls, Duration window, Clock clock, int batch) {
		this.fleet = fleet;
		this.name = name;
		this.maxCalls = maxCalls;
		this.windowMillis = window.toMillis();
		this.clock = clock;
		this.batch = batch;
		fleet.everyHeartbeat(() -> reserve(0));
	}

	@Override
	public boolean tryAcquire() {
		return tryAcquire(1);
	}

	@Override
	public boolean tryAcquire(int permits) {
		boolean permitted;
		int wanted;
		synchronized (this) {
			roll();
			if (this.stock >= permits) {
				this.stock -= permits;
				this.unreported += permits;
				permitted = true;
			}
			else if (mayGoOnCredit(permits - this.stock)) {
				// what the stock has is spent first, the rest is owed
				this.credit += permits - this.stock;
				this.stock = 0;
				this.unreported += permits;
				permitted = true;
			}
			else {
				permitted = false;
			}
			// topped up to two batches while one is left, so that a reply that comes late finds stock
			wanted = (this.stock <= this.batch) ? 2 * this.batch - this.stock : 0;
		}
		if (wanted > 0) {
			reserve(wanted);
		}
		return permitted;
	}

	/**
	 * Settle a call's permits by what it really cost: more is owed as a call on credit is, less is
	 * given back to the fleet with the next report (a negative debt, as {@link #close} gives back).
	 */
	@Override
	public void settle(int difference) {
		if (difference == 0) {
			return;
		}
		synchronized (this) {
			roll();
			this.credit += difference;
			this.unreported += difference;
		}
	}

	/**
	 * A call with too few permits at hand may go ahead on credit while the fleet, as last heard, has
	 * them left; near the end of the window (fewer left than two batches, or two such calls, per
	 * replica), not while a reservation is under way: its reply may say the others took the rest.
	 */
	private boolean mayGoOnCredit(int owed) {
		long left = this.maxCalls - this.fleetGranted - this.credit;
		if (this.exhausted || owed > left) {
			return false;
		}
		return !this.reserving || left >= 2L * Math.max(this.batch, owed) * this.fleet.replicas();
	}

	/** Take permits (none: only report and hear the fleet's figures), unless a report is under way. */
	private void reserve(int wanted) {
		Report report;
		synchronized (this) {
			roll();
			if (this.reserving || !this.fleet.isAvailable() || (wanted > 0 && this.exhausted && this.unacknowledged == null)) {
				return;
			}
			this.reserving = true;
			report = this.unacknowledged;
			if (report == null) {
				report = new Report(this.window, ++this.reports, wanted, this.credit, this.unreported);
				this.credit = 0;
				this.unreported = 0;
				this.unacknowledged = report;
			}
		}
		send(report);
	}

	private void send(Report report) {
		this.fleet
			.script(RESERVE, List.of(key(report.window)), this.maxCalls, report.wanted, report.owed, report.calls,
					this.fleet.replicas(), this.windowMillis + 60_000, this.fleet.replica(), report.number)
			.subscribe((reply) -> reserved(report, reply), (error) -> {
				synchronized (this) {
					this.reserving = false;
				}
			});
	}

	private synchronized void reserved(Report report, List<?> reply) {
		this.reserving = false;
		if (this.unacknowledged == report) {
			this.unacknowledged = null;
		}
		if (report.window != this.window) {
			return; // permits of a window that has ended are void
		}
		int given = ((Number) reply.get(0)).intValue();
		this.stock += given;
		this.fleetGranted = ((Number) reply.get(1)).longValue();
		this.fleetUsed = ((Number) reply.get(2)).longValue();
		this.exhausted = this.fleetGranted >= this.maxCalls && (report.wanted == 0 || given < report.wanted);
	}

	/** A new window: permits of the last one are void; its calls not yet reported go to its key. */
	private void roll() {
		long now = this.clock.millis() / this.windowMillis;
		if (now == this.window) {
			return;
		}
		if (this.window >= 0 && this.unacknowledged == null && (this.credit != 0 || this.unreported != 0)) {
			this.unacknowledged = new Report(this.window, ++this.reports, 0, this.credit, this.unreported);
		}
		if (this.unacknowledged != null && !this.reserving) {
			Report last = this.unacknowledged;
			this.fleet.script(RESERVE, List.of(key(last.window)), this.maxCalls, 0, last.owed, last.calls,
					this.fleet.replicas(), this.windowMillis + 60_000, this.fleet.replica(), last.number)
				.subscribe(null, (error) -> { });
			this.unacknowledged = null;
		}
		this.window = now;
		this.stock = 0;
		this.credit = 0;
		this.unreported = 0;
		this.fleetGranted = 0;
		this.fleetUsed = 0;
		this.exhausted = false;
	}

	private String key(long index) {
		return this.fleet.key(this.name + ":" + this.windowMillis + ":" + index);
	}

	@Override
	public synchronized int callsThisWindow() {
		roll();
		int waiting = (this.unacknowledged != null && this.unacknowledged.window == this.window) ? this.unacknowledged.calls : 0;
		return (int) Math.min(Integer.MAX_VALUE, this.fleetUsed + this.unreported + waiting);
	}

	@Override
	public synchronized boolean isExhausted() {
		roll();
		return this.stock == 0 && (this.exhausted || this.fleetGranted + this.credit >= this.maxCalls);
	}

	/** Give the unspent permits back, so that the other replicas can spend them. */
	@Override
	public void close() {
		Report last;
		synchronized (this) {
			if (this.window < 0 || this.reserving || this.unacknowledged != null
					|| (this.stock == 0 && this.credit == 0 && this.unreported == 0)) {
				return;
			}
			last = new Report(this.window, ++this.reports, 0, this.credit - this.stock, this.unreported);
			this.stock = 0;
		}
		if (this.fleet.isAvailable()) {
			try {
				this.fleet.script(RESERVE, List.of(key(last.window)), this.maxCalls, 0, last.owed, last.calls,
						this.fleet.replicas(), this.windowMillis + 60_000, this.fleet.replica(), last.number)
					.block(this.fleet.settings().timeout().multipliedBy(2));
			}
			catch (RuntimeException ex) {
				// the permits stay counted as handed out until the window ends
			}
		}
	}

}
