package dev.llmresilience.engine;

import java.time.Clock;

import dev.llmresilience.spi.BreakerControl;
import dev.llmresilience.spi.SharedState;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code llmbreakers} actuator endpoint.
 */
@AutoConfiguration(after = LlmAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnAvailableEndpoint(LlmBreakersEndpoint.class)
public final class LlmBreakersEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(EndpointRegistry.class)
	LlmBreakersEndpoint llmBreakersEndpoint(EndpointRegistry endpoints, BreakerTransitions transitions,
			ObjectProvider<EndpointHistory> history, ObjectProvider<DegradationWatch> degradation, ObjectProvider<DeferredQueue> deferred,
			ObjectProvider<CallVolumeGuard> guard, ObjectProvider<BudgetGuard> budget,
			ObjectProvider<RouteBalancer> balancer, ObjectProvider<ConcurrencyLimit> limit,
			ObjectProvider<Hedging> hedging, ObjectProvider<BreakerControl> control,
			ObjectProvider<SharedState> sharedState) {
		return new LlmBreakersEndpoint(endpoints, transitions,
				history.getIfAvailable(() -> new EndpointHistory(endpoints, Clock.systemUTC())), degradation.getIfAvailable(),
				deferred.getIfAvailable(),
				guard.getIfAvailable(CallVolumeGuard::off), budget.getIfAvailable(() -> BudgetGuard.off(Clock.systemUTC())),
				balancer.getIfAvailable(() -> RouteBalancer.priority(endpoints)),
				limit.getIfAvailable(ConcurrencyLimit::off), hedging.getIfAvailable(Hedging::off),
				control.getIfAvailable(() -> BreakerControl.LOCAL), sharedState.getIfAvailable(() -> SharedState.LOCAL));
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(LlmBreakersEndpoint.class)
	LlmBreakersEndpointWebExtension llmBreakersEndpointWebExtension(LlmBreakersEndpoint endpoint) {
		return new LlmBreakersEndpointWebExtension(endpoint);
	}

}
