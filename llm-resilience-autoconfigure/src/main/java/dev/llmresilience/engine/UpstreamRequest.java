package dev.llmresilience.engine;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * The stage that sends an attempt's request upstream (as a stream when the endpoint can), bounded
 * by one {@link AttemptWatchdog}, and stops the upstream call when the attempt is cancelled or loses
 * a hedged request's race, before the stages before it give their permits back. The call-volume
 * guard is asked here rather than as a stage of its own: a tripped guard ends an attempt that was
 * admitted, through its watchdog like any failure to send, so it is observed, recorded by the
 * breaker's rules and retried by the retry's, as an upstream failure is.
 */
final class UpstreamRequest implements AttemptStage {

	static final UpstreamRequest STAGE = new UpstreamRequest();

	private UpstreamRequest() {
	}

	@Override
	public @Nullable Throwable admit(EndpointAttempt attempt, long now) {
		AttemptWatchdog<Object> watchdog = attempt.call()
			.time()
			.watchdog(attempt, attempt.scheduler(), now, EndpointAttempt::isToken);
		attempt.watchdog = watchdog;
		upstream(attempt).subscribe(watchdog);
		return null;
	}

	private static Publisher<?> upstream(EndpointAttempt attempt) {
		EndpointCall call = attempt.call();
		if (!call.context().guard().tryAcquire()) {
			return Flux.error(LlmEndpoint.guardTripped(attempt.name()));
		}
		try {
			return call.streaming() ? attempt.endpoint().client().stream(call.request())
					: attempt.endpoint().client().chat(call.request());
		}
		catch (RuntimeException ex) {
			return Flux.error(ex);
		}
	}

	@Override
	public void release(EndpointAttempt attempt, End end, long now) {
		AttemptWatchdog<Object> watchdog = attempt.watchdog;
		if (watchdog != null && (end == End.CANCELLED || end == End.LOST)) {
			// the cancel reaches the upstream call before the permits are free: the call has stopped
			watchdog.cancel();
		}
	}

}
