package dev.llmresilience.engine;

import java.time.Instant;
import java.util.Map;

import dev.llmresilience.engine.LlmBreakersEndpoint.BreakerDescriptor;
import dev.llmresilience.engine.LlmBreakersEndpoint.BulkheadDescriptor;
import dev.llmresilience.engine.LlmBreakersEndpoint.ConfigDescriptor;
import dev.llmresilience.engine.LlmBreakersEndpoint.EndpointDescriptor;
import dev.llmresilience.engine.LlmBreakersEndpoint.HistoryDescriptor;
import dev.llmresilience.engine.LlmBreakersEndpoint.OutageDescriptor;
import dev.llmresilience.engine.LlmBreakersEndpoint.PastDescriptor;
import dev.llmresilience.engine.LlmBreakersEndpoint.ProbeDescriptor;
import dev.llmresilience.engine.LlmBreakersEndpoint.SettingsDescriptor;
import dev.llmresilience.engine.LlmBreakersEndpoint.TransitionDescriptor;
import dev.llmresilience.gateway.EndpointSettings;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.jspecify.annotations.Nullable;

/**
 * One endpoint as {@code /actuator/llmbreakers} shows it: its breaker, bulkhead, recent transitions
 * probes, first-token times, the evidence of a hang, known capacity and its last 15 minutes.
 */
final class EndpointDescriptions {

	private final BreakerTransitions transitions;

	private final EndpointHistory history;

	EndpointDescriptions(BreakerTransitions transitions, EndpointHistory history) {
		this.transitions = transitions;
		this.history = history;
	}

	EndpointDescriptor describe(LlmEndpoint endpoint) {
		EndpointSettings settings = endpoint.settings();
		CircuitBreaker breaker = endpoint.circuitBreaker();
		CircuitBreaker.Metrics metrics = breaker.getMetrics();
		CircuitBreakerConfig config = breaker.getCircuitBreakerConfig();
		Bulkhead bulkhead = endpoint.bulkhead();
		BreakerTransitions.Transition transition = this.transitions.last(endpoint.name());
		EndpointSettings.Routing routing = settings.routing();
		return new EndpointDescriptor(
				new SettingsDescriptor(settings.upstream().model(), routing.region(), routing.priority(), routing.enabled()),
				new BreakerDescriptor(breaker.getState().name(), metrics.getFailureRate(), metrics.getSlowCallRate(),
						metrics.getNumberOfBufferedCalls(), metrics.getNumberOfFailedCalls(), metrics.getNumberOfSlowCalls(),
						metrics.getNumberOfNotPermittedCalls(), endpoint.startOrder().held()),
				new ConfigDescriptor(config.getSlidingWindowSize(), config.getMinimumNumberOfCalls(),
						config.getFailureRateThreshold(), settings.circuitBreaker().waitDurationInOpenState(),
						config.getPermittedNumberOfCallsInHalfOpenState(), settings.circuitBreaker().startOrderWait()),
				new BulkheadDescriptor(bulkhead.getBulkheadConfig().getMaxConcurrentCalls(),
						bulkhead.getMetrics().getAvailableConcurrentCalls()),
				new PastDescriptor((transition != null) ? describe(transition) : null,
						this.transitions.recent(endpoint.name()).stream().map(EndpointDescriptions::describe).toList(),
						history(endpoint.name())),
				probes(endpoint.probes()), FirstTokenDescriptor.of(endpoint.firstTokenTimes()),
				endpoint.hang().describe(), CapacityDescriptor.of(endpoint));
	}

	private HistoryDescriptor history(String endpoint) {
		EndpointHistory.Timeline timeline = this.history.timeline(endpoint);
		if (timeline == null) {
			return new HistoryDescriptor("", "", EndpointHistory.BUCKET_SECONDS, Map.of(), Map.of(), null);
		}
		EndpointHistory.Outage outage = timeline.outage();
		return new HistoryDescriptor(timeline.start().toString(), timeline.now().toString(), EndpointHistory.BUCKET_SECONDS,
				timeline.states(), timeline.answers(),
				(outage != null) ? new OutageDescriptor(describe(outage.began()), outage.probes(),
						text(outage.firstProbe()), text(outage.lastProbe()), text(outage.ended())) : null);
	}

	private static @Nullable String text(@Nullable Instant instant) {
		return (instant != null) ? instant.toString() : null;
	}

	private static ProbeDescriptor probes(ProbeStats probes) {
		return new ProbeDescriptor(probes.mode().name(), probes.sent(), probes.succeeded(), probes.failed(),
				probes.lastAt(), (probes.lastOutcome() != null) ? probes.lastOutcome().name() : null);
	}

	private static TransitionDescriptor describe(BreakerTransitions.Transition transition) {
		return new TransitionDescriptor(transition.from().name(), transition.to().name(), transition.at().toString(),
				transition.failureRate(), transition.bufferedCalls(), transition.reason(), transition.source());
	}

}
