package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmUnavailableException;
import dev.llmresilience.spi.FallbackCache;
import dev.llmresilience.spi.FallbackCache.CachedAnswer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

/**
 * What a call answers when no endpoint did, in order: an earlier answer to the same request
 * (CACHED), a place in the deferred queue for a deferrable request (DEFERRED), and last the fast
 * BUSY answer (or {@link LlmUnavailableException} with {@code busy-as-error}). It also keeps each
 * live answer for the cache.
 */
final class Degrader {

	private static final Log logger = LogFactory.getLog(Degrader.class);

	private final GatewaySettings settings;

	private final Degradation degradation;

	Degrader(GatewaySettings settings, Degradation degradation) {
		this.settings = settings;
		this.degradation = degradation;
	}

	/**
	 * Degrade a chat call.
	 * @param route the route
	 * @param request the request
	 * @param attempts the call's attempts
	 * @param latency the call's time so far
	 * @param again how the deferred queue asks the route again later
	 * @return the degraded answer
	 */
	Mono<ChatResponse> chat(String route, ChatRequest request, List<Attempt> attempts, Duration latency,
			Function<ChatRequest, Mono<ChatResponse>> again) {
		Optional<CachedAnswer> cached = cached(route, request);
		if (cached.isPresent()) {
			return Mono.just(cachedAnswer(cached.get(), attempts, latency));
		}
		DeferredQueue deferred = this.degradation.deferred();
		// a spent guard must not fill the queue, and a content filter would block the request again later
		if (deferred != null && request.deferrable() && !has(attempts, Outcome.GUARD_TRIPPED)
				&& !has(attempts, Outcome.CONTENT_FILTERED)) {
			return deferred.enqueue(request, again)
				.map((ticket) -> ChatResponse.builder()
					.content(this.settings.deferredMessage())
					.tier(Tier.DEFERRED)
					.latency(latency)
					.attempts(attempts)
					.ticket(ticket)
					.build())
				.switchIfEmpty(Mono.defer(() -> {
					logger.debug("The deferred queue is full (" + deferred.capacity() + "): answering BUSY");
					return busy(route, attempts, latency);
				}));
		}
		return busy(route, attempts, latency);
	}

	/**
	 * The BUSY answer of a call (chat or stream) that no endpoint answered: the busy message, or the
	 * content-filter message when a filter blocked the request; an error with {@code busy-as-error}.
	 * @param route the route
	 * @param attempts the call's attempts
	 * @param latency the call's time so far
	 * @return the answer, or the error
	 */
	Mono<ChatResponse> busy(String route, List<Attempt> attempts, Duration latency) {
		List<Attempt> made = List.copyOf(attempts);
		if (this.settings.busyAsError()) {
			return Mono.error(new LlmUnavailableException(route, made));
		}
		boolean filtered = has(made, Outcome.CONTENT_FILTERED);
		return Mono.just(ChatResponse.builder()
			.content(filtered ? this.settings.contentFilteredMessage() : this.settings.busyMessage())
			.tier(Tier.BUSY)
			.finishReason(filtered ? ChatResponse.CONTENT_FILTER : null)
			.latency(latency)
			.attempts(made)
			.build());
	}

	/**
	 * Keep a live answer for the CACHED tier.
	 * @param route the route
	 * @param request the request
	 * @param response the answer
	 */
	void remember(String route, ChatRequest request, ChatResponse response) {
		FallbackCache cache = this.degradation.cache();
		if (cache == null) {
			return;
		}
		try {
			cache.put(RequestKeys.of(route, request), response);
		}
		catch (RuntimeException ex) {
			// the application's cache may be remote and down: the live answer stands
			logger.warn("Could not keep the answer in the fallback cache: " + ex);
		}
	}

	private Optional<CachedAnswer> cached(String route, ChatRequest request) {
		FallbackCache cache = this.degradation.cache();
		if (cache == null) {
			return Optional.empty();
		}
		try {
			return cache.get(RequestKeys.of(route, request));
		}
		catch (RuntimeException ex) {
			// a cache that is down is a cache miss: deferral and BUSY still follow
			logger.warn("Could not read the fallback cache: " + ex);
			return Optional.empty();
		}
	}

	private ChatResponse cachedAnswer(CachedAnswer cached, List<Attempt> attempts, Duration latency) {
		ChatResponse original = cached.response();
		Clock clock = this.degradation.clock();
		Duration age = Duration.between(cached.answeredAt(), clock.instant());
		// the answer as it was, but none of its cost (nothing was paid for it now) or its ticket
		return original.toBuilder()
			.tier(Tier.CACHED)
			.cost(null)
			.latency(latency)
			.attempts(attempts)
			.ticket(null)
			.age(age.isNegative() ? Duration.ZERO : age)
			.build();
	}

	private static boolean has(List<Attempt> attempts, Outcome outcome) {
		return attempts.stream().anyMatch((attempt) -> attempt.outcome() == outcome);
	}

}
