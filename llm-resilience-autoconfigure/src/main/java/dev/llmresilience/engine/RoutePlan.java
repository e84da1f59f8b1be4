package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.spi.BalanceSource;
import io.github.resilience4j.bulkhead.Bulkhead;
import org.jspecify.annotations.Nullable;

/**
 * One route, ordered and grouped once, at start-up: each call's order is then one choice per group
 * (the chosen endpoint first, the rest of the group after it in the route's order), and nothing is
 * computed for a route whose groups leave nothing to choose.
 */
final class RoutePlan {

	private final RouteStrategy strategy;

	private final List<LlmEndpoint> ordered;

	// where each group starts, then the route's size
	private final int[] groups;

	private final double[] weights;

	private final @Nullable PeakEwma[] latencies;

	private final LongAdder[] chosen;

	private final boolean balanced;

	RoutePlan(RouteStrategy strategy, List<LlmEndpoint> endpoints, Map<String, Double> weights,
			Map<String, PeakEwma> latencies) {
		this.strategy = strategy;
		List<LlmEndpoint> ordered = new ArrayList<>(endpoints);
		if (strategy.order() == RouteOrder.CHEAPEST_FIRST) {
			ordered.sort(Comparator.comparingDouble(RoutePlan::price)); // stable: ties keep the route's order
		}
		this.ordered = List.copyOf(ordered);
		int size = ordered.size();
		List<Integer> starts = new ArrayList<>();
		for (int i = 0; i < size; i++) {
			if (i == 0 || rank(ordered.get(i)) != rank(ordered.get(i - 1))) {
				starts.add(i);
			}
		}
		starts.add(size);
		this.groups = starts.stream().mapToInt(Integer::intValue).toArray();
		this.weights = new double[size];
		this.latencies = new PeakEwma[size];
		this.chosen = new LongAdder[size];
		for (int i = 0; i < size; i++) {
			String name = ordered.get(i).name();
			this.weights[i] = weights.getOrDefault(name, 1.0);
			this.latencies[i] = (strategy.balance() == Balance.LEAST_LATENCY) ? latencies.get(name) : null;
			this.chosen[i] = new LongAdder();
		}
		this.balanced = strategy.balance() != Balance.PRIORITY && this.groups.length - 1 < size;
	}

	/**
	 * The order of one call.
	 * @param source the random numbers and the clock
	 * @return the endpoints, the chosen one first
	 */
	List<LlmEndpoint> order(BalanceSource source) {
		if (!this.balanced) {
			this.chosen[0].increment();
			return this.ordered;
		}
		long now = (this.strategy.balance() == Balance.LEAST_LATENCY) ? source.nanoTime() : 0;
		List<LlmEndpoint> order = new ArrayList<>(this.ordered.size());
		int first = -1;
		for (int group = 0; group < this.groups.length - 1; group++) {
			int start = this.groups[group];
			int end = this.groups[group + 1];
			int pick = (end - start > 1) ? choose(start, end, source, now) : start;
			order.add(this.ordered.get(pick));
			for (int i = start; i < end; i++) {
				if (i != pick) {
					order.add(this.ordered.get(i));
				}
			}
			if (first < 0) {
				first = pick;
			}
		}
		this.chosen[first].increment();
		return order;
	}

	long chosen(String endpoint) {
		long chosen = 0;
		for (int i = 0; i < this.ordered.size(); i++) {
			if (this.ordered.get(i).name().equals(endpoint)) {
				chosen += this.chosen[i].sum();
			}
		}
		return chosen;
	}

	RouteReport report(long now) {
		List<RouteReport.Member> members = new ArrayList<>(this.ordered.size());
		for (int i = 0; i < this.ordered.size(); i++) {
			PeakEwma latency = this.latencies[i];
			members.add(new RouteReport.Member(this.ordered.get(i).name(), this.weights[i], this.chosen[i].sum(),
					(latency != null) ? Duration.ofNanos((long) latency.estimate(now)) : null));
		}
		return new RouteReport(this.strategy, members);
	}

	// Only endpoints that would take the call now may be chosen: an open breaker or a full bulkhead is
	// left where the route's order puts it, and the walk passes it without a call.
	private int choose(int start, int end, BalanceSource source, long now) {
		long admitting = 0;
		int count = 0;
		double total = 0;
		for (int i = start; i < end && i - start < Long.SIZE; i++) {
			if (this.ordered.get(i).admitsCalls()) {
				admitting |= 1L << (i - start);
				count++;
				total += this.weights[i];
			}
		}
		if (count <= 1) {
			return start + ((count == 0) ? 0 : Long.numberOfTrailingZeros(admitting));
		}
		return (this.strategy.balance() == Balance.WEIGHTED) ? weighted(start, admitting, total, source)
				: leastLoaded(start, admitting, count, source, now);
	}

	private int weighted(int start, long admitting, double total, BalanceSource source) {
		double drawn = source.nextDouble() * total;
		int last = start;
		for (long rest = admitting; rest != 0; rest &= rest - 1) {
			last = start + Long.numberOfTrailingZeros(rest);
			drawn -= this.weights[last];
			if (drawn < 0) {
				return last;
			}
		}
		return last;
	}

	// The power of two choices: cheaper than comparing every endpoint, and it does not send every
	// call to the one that looked fastest a moment ago.
	private int leastLoaded(int start, long admitting, int count, BalanceSource source, long now) {
		int first = (int) (source.nextDouble() * count);
		int second = (int) (source.nextDouble() * (count - 1));
		if (second >= first) {
			second++;
		}
		int a = start + nth(admitting, first);
		int b = start + nth(admitting, second);
		return (load(b, now) < load(a, now)) ? b : a;
	}

	// The latency estimate times the attempts in flight on it (plus one), so that a fast endpoint
	// that is already busy does not take every call; one nanosecond added so that endpoints not yet
	// measured are told apart by their calls in flight.
	private double load(int index, long now) {
		Bulkhead bulkhead = this.ordered.get(index).bulkhead();
		int inFlight = bulkhead.getBulkheadConfig().getMaxConcurrentCalls()
				- bulkhead.getMetrics().getAvailableConcurrentCalls();
		PeakEwma latency = this.latencies[index];
		double estimate = (latency != null) ? latency.estimate(now) : 0;
		return (estimate + 1) * (Math.max(0, inFlight) + 1);
	}

	private static int nth(long bits, int n) {
		long rest = bits;
		for (int i = 0; i < n; i++) {
			rest &= rest - 1;
		}
		return Long.numberOfTrailingZeros(rest);
	}

	private double rank(LlmEndpoint endpoint) {
		return (this.strategy.order() == RouteOrder.CHEAPEST_FIRST) ? price(endpoint)
				: endpoint.settings().routing().priority();
	}

	// rounded to a billionth, so that prices written differently but equal (0.1 + 0.65, 0.15 + 0.6) are one group
	private static double price(LlmEndpoint endpoint) {
		EndpointSettings.Price price = endpoint.settings().routing().price();
		return (price != null) ? Math.rint((price.inputPerMillion() + price.outputPerMillion()) * 1e9) / 1e9
				: Double.POSITIVE_INFINITY;
	}

}
