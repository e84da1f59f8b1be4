package dev.llmresilience.protocol;

import java.time.Duration;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The end of a stream's last event ({@code [DONE]}, {@code message_stop}) is not the end of its
 * HTTP body: the body's last chunk comes right after it. A reader that completed at the last event
 * cancelled the body before that chunk, and Reactor Netty closes a connection whose body was
 * cancelled, so every streamed call (and every chat, which goes upstream as a stream) opened a new
 * connection: a TCP and TLS handshake per call against a real provider. So a reader marks the last
 * event and reads on, ignoring anything after it, until the body ends; only a server that keeps the
 * body open after its last event is cut, after {@link #GRACE}.
 */
public final class StreamEnd {

	/** How long a body may stay open after the stream's last event before it is cut. */
	public static final Duration GRACE = Duration.ofSeconds(1);

	private final Sinks.Empty<Void> reached = Sinks.empty();

	private volatile boolean ended;

	/** Note that the stream's last event has come. */
	public void reached() {
		this.ended = true;
		this.reached.tryEmitEmpty();
	}

	/**
	 * Whether the stream's last event has come.
	 * @return true once {@link #reached()}
	 */
	public boolean isReached() {
		return this.ended;
	}

	/**
	 * The deltas until the body ends, or at most {@link #GRACE} after the last event.
	 * @param <T> the deltas' type
	 * @param deltas the deltas read from the body
	 * @return the deltas
	 */
	public <T> Flux<T> bounded(Flux<T> deltas) {
		return deltas.takeUntilOther(this.reached.asMono().then(Mono.delay(GRACE)));
	}

}
