package dev.llmresilience.engine;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Binds the meters of the gateway's guards: the times the call-volume guard and the daily budget
 * started refusing calls, and the calls in flight and refused under
 * {@code llm.gateway.max-concurrent-calls}.
 */
final class GuardMeters implements MeterBinder {

	private final ObjectProvider<CallVolumeGuard> callVolume;

	private final ObjectProvider<BudgetGuard> budget;

	private final ObjectProvider<ConcurrencyLimit> limit;

	// looked up when the meters are bound: making the binder, which Boot may do while it sets up the
	// registry, creates none of the gateway's beans
	GuardMeters(ObjectProvider<CallVolumeGuard> callVolume, ObjectProvider<BudgetGuard> budget,
			ObjectProvider<ConcurrencyLimit> limit) {
		this.callVolume = callVolume;
		this.budget = budget;
		this.limit = limit;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.callVolume.ifAvailable((guard) -> FunctionCounter
			.builder("llm.gateway.guard.trips", guard, CallVolumeGuard::trips)
			.description("Times the call-volume guard started refusing upstream calls")
			.register(registry));
		this.budget.ifAvailable((guard) -> FunctionCounter.builder("llm.gateway.budget.trips", guard, BudgetGuard::trips)
			.description("Times the daily budget was spent")
			.register(registry));
		this.limit.ifAvailable((calls) -> {
			Gauge.builder("llm.gateway.calls.in-flight", calls, ConcurrencyLimit::inFlight)
				.description("Gateway calls in flight under llm.gateway.max-concurrent-calls (0 when it is off)")
				.register(registry);
			FunctionCounter.builder("llm.gateway.calls.refused", calls, ConcurrencyLimit::refused)
				.description("Gateway calls refused by llm.gateway.max-concurrent-calls")
				.register(registry);
		});
	}

}
