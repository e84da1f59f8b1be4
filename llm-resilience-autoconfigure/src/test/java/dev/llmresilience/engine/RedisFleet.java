package dev.llmresilience.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fixture of a test whose replicas share state on one real Redis: a {@link RedisServerSupport}
 * started before each test and stopped after it, a {@link RedisFaultProxy} in front of it when
 * asked for, a Lettuce connection of the test's own (opened at first use) to read and write Redis
 * directly, the scripts a test watches for, and the replicas' runners, each with its
 * {@link FleetEvents}. A test registers it with {@code @RegisterExtension}; what the test closes in
 * its own {@code @AfterEach}, or hands to {@link #closeAfterEach}, is closed before Redis.
 */
final class RedisFleet implements BeforeEachCallback, AfterEachCallback {

	private final boolean proxied;

	private final @Nullable Duration clearOfTheHour;

	private final Deque<AutoCloseable> resources = new ArrayDeque<>();

	private @Nullable RedisServerSupport redis;

	private @Nullable RedisFaultProxy proxy;

	private @Nullable RedisClient client;

	private @Nullable StatefulRedisConnection<String, String> connection;

	RedisFleet() {
		this(false, null);
	}

	private RedisFleet(boolean proxied, @Nullable Duration clearOfTheHour) {
		this.proxied = proxied;
		this.clearOfTheHour = clearOfTheHour;
	}

	/**
	 * The same fixture with a {@link RedisFaultProxy} in front of Redis, for the replicas started
	 * with {@link #replicaThroughProxy}.
	 * @return the fixture
	 */
	RedisFleet withFaultProxy() {
		return new RedisFleet(true, this.clearOfTheHour);
	}

	/**
	 * The same fixture, waiting before it starts Redis, if need be, until a test that takes
	 * {@code needed} of real time cannot cross the top of an hour (see
	 * {@link RedisServerSupport#clearOfTheHour}).
	 * @param needed the real time the test takes at most
	 * @return the fixture
	 */
	RedisFleet clearOfTheHour(Duration needed) {
		return new RedisFleet(this.proxied, needed);
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		if (this.clearOfTheHour != null) {
			RedisServerSupport.clearOfTheHour(this.clearOfTheHour);
		}
		this.redis = RedisServerSupport.start();
		if (this.proxied) {
			this.proxy = new RedisFaultProxy(this.redis.port());
		}
	}

	/**
	 * A resource of the test's own, e.g. a provider, closed after the test (the last one first), and
	 * before Redis.
	 * @param <T> the resource's type
	 * @param resource the resource
	 * @return the resource
	 */
	<T extends AutoCloseable> T closeAfterEach(T resource) {
		this.resources.push(resource);
		return resource;
	}

	@Override
	public void afterEach(ExtensionContext context) throws Exception {
		try {
			while (!this.resources.isEmpty()) {
				this.resources.pop().close();
			}
		}
		finally {
			closeRedis();
		}
	}

	// whatever the test's resources did on closing: a server left running would outlive the build
	private void closeRedis() {
		try {
			if (this.connection != null) {
				this.connection.close();
			}
			if (this.client != null) {
				this.client.shutdown();
			}
			if (this.proxy != null) {
				this.proxy.close();
			}
		}
		finally {
			if (this.redis != null) {
				this.redis.close();
			}
			this.connection = null;
			this.client = null;
			this.proxy = null;
			this.redis = null;
		}
	}

	/**
	 * The Redis server, to stop and start again.
	 * @return the server
	 */
	RedisServerSupport server() {
		if (this.redis == null) {
			throw new IllegalStateException("Redis runs only during a test");
		}
		return this.redis;
	}

	/**
	 * Redis's port, for a replica in a child JVM.
	 * @return the port
	 */
	int port() {
		return server().port();
	}

	/**
	 * The fault proxy in front of Redis.
	 * @return the proxy
	 */
	RedisFaultProxy proxy() {
		if (this.proxy == null) {
			throw new IllegalStateException("No fault proxy: register the fixture withFaultProxy()");
		}
		return this.proxy;
	}

	/**
	 * The test's own connection to Redis (not through the proxy), opened at first use and closed
	 * after the test.
	 * @return the connection
	 */
	StatefulRedisConnection<String, String> connection() {
		if (this.connection == null) {
			this.client = RedisClient.create(RedisURI.create("127.0.0.1", port()));
			this.connection = this.client.connect();
		}
		return this.connection;
	}

	/**
	 * The synchronous commands of {@link #connection()}.
	 * @return the commands
	 */
	RedisCommands<String, String> commands() {
		return connection().sync();
	}

	/**
	 * One of the starter's scripts, loaded into Redis beforehand, so that the {@code EVALSHA} a
	 * replica sends for it is one Redis runs (not a {@code NOSCRIPT}) and the proxy sees its SHA-1.
	 * @param name the script's file under {@code dev/llmresilience/redis}, e.g. {@code deferred-end.lua}
	 * @return the script's markers
	 */
	Script loadScript(String name) {
		try {
			String body = new ClassPathResource("dev/llmresilience/redis/" + name).getContentAsString(StandardCharsets.UTF_8);
			String sha = RedisScript.of(body).getSha1();
			assertThat(commands().scriptLoad(body)).isEqualTo(sha);
			return new Script(sha, body.substring(0, body.indexOf('\n')));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * A replica's runner (see {@link Replicas#replica}) with a {@link FleetEvents} listener.
	 * @param name the replica's name
	 * @param properties further properties, e.g. its endpoints
	 * @return the runner
	 */
	ApplicationContextRunner replica(String name, String... properties) {
		return Replicas.replica(server(), name, properties).withBean(FleetEvents.class);
	}

	/**
	 * A replica's runner as {@link #replica}, reaching Redis through the {@link #proxy()}.
	 * @param name the replica's name
	 * @param properties further properties, e.g. its endpoints
	 * @return the runner
	 */
	ApplicationContextRunner replicaThroughProxy(String name, String... properties) {
		return replica(name, properties).withPropertyValues("spring.data.redis.port=" + proxy().port());
	}

	/**
	 * Two replicas of the same properties: {@code a}, reaching Redis through the {@link #proxy()},
	 * and {@code b}, reaching it directly.
	 * @param properties their properties
	 * @return their runners, {@code a} first
	 */
	List<ApplicationContextRunner> replicasAThroughProxyAndB(String... properties) {
		return List.of(replicaThroughProxy("a", properties), replica("b", properties));
	}

	/**
	 * The properties of a replica whose one endpoint, {@code primary}, is tried once per call and
	 * whose failures never open its breaker (the requests deferred are to reach the provider in
	 * the background), deferring requests for {@code delay} at first and at most
	 * {@code maxAttempts} attempts.
	 * @param baseUrl the provider's base URL
	 * @param delay the deferral's first delay, e.g. {@code 300ms}
	 * @param maxAttempts the deferral's attempts at most
	 * @param more further properties, e.g. the key prefix
	 * @return the properties
	 */
	static String[] deferringPrimary(String baseUrl, String delay, int maxAttempts, String... more) {
		List<String> properties = new ArrayList<>(List.of("llm.endpoints.primary.base-url=" + baseUrl,
				"llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1",
				"llm.defaults.circuit-breaker.sliding-window-size=1000",
				"llm.defaults.circuit-breaker.minimum-number-of-calls=1000", "llm.gateway.deferral.delay=" + delay,
				"llm.gateway.deferral.max-attempts=" + maxAttempts));
		properties.addAll(List.of(more));
		return properties.toArray(String[]::new);
	}

	/**
	 * What a fault can be armed with for one script: its SHA-1 (in {@code EVALSHA}) and its first
	 * line (in {@code EVAL}, should Redis have lost the script).
	 *
	 * @param sha the script's SHA-1
	 * @param firstLine the first line of its body
	 */
	record Script(String sha, String firstLine) {

	}

}
