package dev.llmresilience.engine;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.llmresilience.chat.ChatResponse;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The background attempts' timers, one per request, on Reactor's parallel scheduler (so tests can
 * drive them with virtual time), and which requests have an attempt under way.
 */
final class DeferredTimers {

	private final Map<String, Disposable> timers = new ConcurrentHashMap<>();

	private final Set<String> running = ConcurrentHashMap.newKeySet();

	/**
	 * Make an attempt after a wait.
	 * @param ticket the request's ticket
	 * @param wait the wait
	 * @param attempt the attempt: an answer, empty when nothing answered, or an error
	 * @param onEnd receives the answer, or empty when nothing answered
	 * @param onError receives the error
	 */
	void schedule(String ticket, Duration wait, Supplier<Mono<ChatResponse>> attempt,
			Consumer<Optional<ChatResponse>> onEnd, Consumer<Throwable> onError) {
		Disposable timer = Mono.delay(wait, Schedulers.parallel()).then(Mono.defer(() -> {
			this.running.add(ticket);
			return attempt.get();
		})).map(Optional::of).defaultIfEmpty(Optional.empty()).doFinally((signal) -> this.running.remove(ticket))
			.subscribe(onEnd, onError);
		this.timers.put(ticket, timer);
	}

	/**
	 * Forget a request's timer (its request has ended).
	 * @param ticket the request's ticket
	 */
	void remove(String ticket) {
		this.timers.remove(ticket);
	}

	/**
	 * Stop a request's timer unless its attempt is under way.
	 * @param ticket the request's ticket
	 * @return false if its attempt is under way
	 */
	boolean release(String ticket) {
		if (this.running.contains(ticket)) {
			return false;
		}
		Disposable timer = this.timers.remove(ticket);
		if (timer != null) {
			timer.dispose();
		}
		return true;
	}

	void disposeAll() {
		this.timers.values().forEach(Disposable::dispose);
		this.timers.clear();
	}

}
