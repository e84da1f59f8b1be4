package dev.llmresilience.redis;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

import dev.llmresilience.spi.SharedState.SpendLedger;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The budget's spending, fleet-wide: each day's total is one Redis counter, in units of
 * 10<sup>-10</sup> of the prices' currency (so sums are exact integers; a cost is rounded half-up
 * to that), that every replica adds each answer's cost to in the background: the call that spent
 * it does not wait. Additions are numbered, so that one sent again after a lost reply is added once
 * ({@code budget-add.lua}). A replica knows the fleet's total from each reply, from the message the
 * replica whose addition crossed the budget publishes, and from a read each heartbeat; costs added
 * while Redis is unavailable are kept and added when it is back, so the day's total in Redis is
 * exact once every replica has sent what it holds.
 */
final class RedisSpendLedger implements SpendLedger {

	private static final RedisScript<String> ADD = RedisScripts.load("budget-add", String.class);

	private static final int SCALE = 10;

	private static final Duration RETENTION = Duration.ofDays(2);

	private final RedisFleet fleet;

	private final long budget;

	private @Nullable LocalDate day;

	private long fleetTotal;

	private long unsent;

	/** Additions made and not yet acknowledged by Redis, oldest first: sent one at a time, in order. */
	private final Deque<Addition> queued = new ArrayDeque<>();

	private boolean sending;

	private long additions;

	private record Addition(LocalDate day, long number, long amount) {
	}

	/**
	 * Create a ledger.
	 * @param fleet this replica's seat in the fleet
	 * @param maxCostPerDay the budget (0 = none), to tell the fleet when it is spent
	 */
	public RedisSpendLedger(RedisFleet fleet, BigDecimal maxCostPerDay) {
		this.fleet = fleet;
		this.budget = units(maxCostPerDay);
		fleet.onMessage("budget", this::received);
		fleet.everyHeartbeat(this::refresh);
	}

	@Override
	public BigDecimal add(LocalDate day, BigDecimal cost) {
		BigDecimal spent;
		synchronized (this) {
			roll(day);
			this.unsent += units(cost);
			spent = spent();
		}
		send();
		return spent;
	}

	@Override
	public synchronized BigDecimal spent(LocalDate day) {
		roll(day);
		return spent();
	}

	private BigDecimal spent() {
		long queuedToday = this.queued.stream().filter((each) -> each.day.equals(this.day)).mapToLong(Addition::amount).sum();
		return BigDecimal.valueOf(this.fleetTotal + queuedToday + this.unsent, SCALE).stripTrailingZeros();
	}

	/** Send the oldest addition not yet acknowledged (making one of what is unsent if none is queued). */
	private void send() {
		Addition next;
		synchronized (this) {
			if (this.sending || !this.fleet.isAvailable()) {
				return;
			}
			if (this.queued.isEmpty() && this.unsent != 0 && this.day != null) {
				this.queued.add(new Addition(this.day, ++this.additions, this.unsent));
				this.unsent = 0;
			}
			next = this.queued.peekFirst();
			if (next == null) {
				return;
			}
			this.sending = true;
		}
		this.fleet.script(ADD, List.of(key(next.day)), next.amount, this.fleet.replica(), next.number,
				RETENTION.toMillis())
			.subscribe((reply) -> {
				long total = Long.parseLong(reply);
				synchronized (this) {
					this.sending = false;
					this.queued.remove(next);
					if (next.day.equals(this.day)) {
						this.fleetTotal = Math.max(this.fleetTotal, total);
					}
				}
				if (this.budget > 0 && total - next.amount < this.budget && total >= this.budget) {
					this.fleet.command(() -> this.fleet.redis()
						.convertAndSend(this.fleet.channel(), "budget|" + next.day + "|" + total))
						.subscribe(null, (error) -> { });
				}
				send();
			}, (error) -> {
				synchronized (this) {
					// kept, with its number, and sent again at the next heartbeat: added once whatever happened
					this.sending = false;
				}
			});
	}

	/** {@code day|total}: another replica's addition crossed the budget. */
	private void received(String payload) {
		String[] parts = payload.split("\\|");
		if (parts.length == 2) {
			heard(LocalDate.parse(parts[0]), Long.parseLong(parts[1]));
		}
	}

	private synchronized void heard(LocalDate day, long total) {
		if (day.equals(this.day)) {
			this.fleetTotal = Math.max(this.fleetTotal, total);
		}
	}

	/** Each heartbeat: send what Redis could not take before, and hear what the others spent. */
	private void refresh() {
		LocalDate today;
		synchronized (this) {
			today = this.day;
		}
		if (today == null) {
			return;
		}
		send();
		this.fleet.command(() -> this.fleet.redis().<String, String>opsForHash().get(key(today), "total"))
			.subscribe((total) -> heard(today, Long.parseLong(total)), (error) -> { });
	}

	private void roll(LocalDate today) {
		if (today.equals(this.day)) {
			return;
		}
		if (this.day != null && this.unsent != 0) {
			this.queued.add(new Addition(this.day, ++this.additions, this.unsent));
		}
		this.day = today;
		this.fleetTotal = 0;
		this.unsent = 0;
	}

	private String key(LocalDate day) {
		return this.fleet.key("budget:" + day);
	}

	private static long units(BigDecimal amount) {
		return amount.setScale(SCALE, RoundingMode.HALF_UP).unscaledValue().longValueExact();
	}

}
