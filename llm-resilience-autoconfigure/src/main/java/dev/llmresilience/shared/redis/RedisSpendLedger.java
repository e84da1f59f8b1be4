package dev.llmresilience.shared.redis;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.time.LocalDate;

import dev.llmresilience.guard.SpendLedger;
import org.jspecify.annotations.Nullable;

/**
 * The budget's spending, fleet-wide: each day's total is one Redis counter, in units of
 * 10<sup>-10</sup> of the prices' currency (so sums are exact integers; a cost is rounded half-up
 * to that), that every replica adds each answer's cost to with {@code INCRBY}, in the background:
 * the call that spent it does not wait. A replica knows the fleet's total from each reply, from the
 * message the replica whose addition crossed the budget publishes, and from a read each heartbeat;
 * costs added while Redis is unavailable are kept and added when it is back, so the day's total in
 * Redis is exact once every replica has sent what it holds.
 */
public final class RedisSpendLedger implements SpendLedger {

	private static final int SCALE = 10;

	private static final Duration RETENTION = Duration.ofDays(2);

	private final RedisFleet fleet;

	private final long budget;

	private @Nullable LocalDate day;

	private long fleetTotal;

	private long unsent;

	private long sending;

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
		return BigDecimal.valueOf(this.fleetTotal + this.sending + this.unsent, SCALE).stripTrailingZeros();
	}

	private void send() {
		LocalDate sentDay;
		long amount;
		synchronized (this) {
			if (this.sending != 0 || this.unsent == 0 || this.day == null || !this.fleet.isAvailable()) {
				return;
			}
			sentDay = this.day;
			amount = this.unsent;
			this.sending = amount;
			this.unsent = 0;
		}
		String key = key(sentDay);
		this.fleet.command(() -> this.fleet.redis().opsForValue().increment(key, amount)
			.flatMap((total) -> this.fleet.redis().expire(key, RETENTION).thenReturn(total)))
			.subscribe((total) -> {
				boolean crossed = this.budget > 0 && total - amount < this.budget && total >= this.budget;
				synchronized (this) {
					this.sending = 0;
					if (sentDay.equals(this.day)) {
						this.fleetTotal = Math.max(this.fleetTotal, total);
					}
				}
				if (crossed) {
					this.fleet.command(() -> this.fleet.redis().convertAndSend(this.fleet.channel(),
							"budget|" + sentDay + "|" + total)).subscribe(null, (error) -> { });
				}
				send();
			}, (error) -> {
				synchronized (this) {
					this.sending = 0;
					if (sentDay.equals(this.day)) {
						this.unsent += amount;
					}
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
		this.fleet.command(() -> this.fleet.redis().opsForValue().get(key(today)))
			.subscribe((total) -> heard(today, Long.parseLong(total)), (error) -> { });
	}

	private void roll(LocalDate today) {
		if (today.equals(this.day)) {
			return;
		}
		if (this.day != null && this.unsent != 0 && this.fleet.isAvailable()) {
			String key = key(this.day);
			long amount = this.unsent;
			this.fleet.command(() -> this.fleet.redis().opsForValue().increment(key, amount)).subscribe(null, (e) -> { });
		}
		this.day = today;
		this.fleetTotal = 0;
		this.unsent = 0;
		this.sending = 0;
	}

	private String key(LocalDate day) {
		return this.fleet.key("budget:" + day);
	}

	private static long units(BigDecimal amount) {
		return amount.setScale(SCALE, RoundingMode.HALF_UP).unscaledValue().longValueExact();
	}

}
