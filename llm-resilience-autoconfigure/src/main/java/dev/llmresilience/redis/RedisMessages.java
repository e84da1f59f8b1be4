package dev.llmresilience.redis;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.ReactiveSubscription;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.ReactiveRedisMessageListenerContainer;

/**
 * The fleet's pub/sub channel: one subscription, messages {@code kind|payload} dispatched by kind.
 * Lettuce subscribes again by itself when its connection comes back; a subscription that ended
 * (with an error) is made anew when sharing resumes. What was published meanwhile is lost: each
 * part reconciles from the keys.
 */
final class RedisMessages {

	private static final Log logger = LogFactory.getLog(RedisMessages.class);

	private final ReactiveRedisConnectionFactory connectionFactory;

	private final String channel;

	private final Map<String, Consumer<String>> handlers = new ConcurrentHashMap<>();

	private @Nullable ReactiveRedisMessageListenerContainer container;

	private @Nullable Disposable subscription;

	RedisMessages(ReactiveRedisConnectionFactory connectionFactory, String channel) {
		this.connectionFactory = connectionFactory;
		this.channel = channel;
	}

	void on(String kind, Consumer<String> handler) {
		this.handlers.put(kind, handler);
	}

	/**
	 * Subscribe anew, waiting at most {@code timeout} for Redis to confirm it.
	 * @param timeout the wait
	 * @param onError told when the subscription fails
	 */
	synchronized void subscribe(Duration timeout, Consumer<Throwable> onError) {
		if (this.subscription != null && !this.subscription.isDisposed()) {
			return; // Lettuce subscribes its connection again when it reconnects
		}
		close();
		ReactiveRedisMessageListenerContainer fresh = new ReactiveRedisMessageListenerContainer(this.connectionFactory);
		this.container = fresh;
		this.subscription = fresh.receiveLater(ChannelTopic.of(this.channel))
			.block(timeout)
			.map(ReactiveSubscription.Message::getMessage)
			.subscribe(this::dispatch, onError);
	}

	private void dispatch(String message) {
		int bar = message.indexOf('|');
		Consumer<String> handler = (bar > 0) ? this.handlers.get(message.substring(0, bar)) : null;
		if (handler == null) {
			return;
		}
		try {
			handler.accept(message.substring(bar + 1));
		}
		catch (RuntimeException ex) {
			logger.warn("Could not apply the fleet's message '" + message + "': " + ex, ex);
		}
	}

	synchronized void close() {
		if (this.subscription != null) {
			this.subscription.dispose();
			this.subscription = null;
		}
		if (this.container != null) {
			this.container.destroyLater().subscribe(null, (error) -> logger.debug("Closing a subscription: " + error));
			this.container = null;
		}
	}

}
