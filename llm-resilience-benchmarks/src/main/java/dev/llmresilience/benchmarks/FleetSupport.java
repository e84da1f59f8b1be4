package dev.llmresilience.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

import dev.llmresilience.engine.LlmAutoConfiguration;
import redis.embedded.RedisServer;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;

/**
 * What {@link FleetBenchmark} runs on: a real redis-server (6.2, from the embedded-redis jar) on a
 * free loopback port, and replicas, each an application context with the starter's and Spring
 * Boot's Redis auto-configuration, as an application has them.
 */
final class FleetSupport {

	private FleetSupport() {
	}

	/** The library's WARN per breaker transition would flood the output of a replay. */
	static void quiet() {
		if (Boolean.getBoolean("verbose")) {
			return;
		}
		Logger.getLogger("").setLevel(Level.SEVERE);
		for (String name : new String[] { "dev.llmresilience", "io.lettuce", "io.netty", "reactor", "org.springframework" }) {
			Logger.getLogger(name).setLevel(Level.SEVERE);
		}
	}

	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** A redis-server with no persistence on a port. */
	static RedisServer redis(int port) {
		try {
			RedisServer server = RedisServer.newRedisServer()
				.port(port)
				.bind("127.0.0.1")
				.setting("save \"\"")
				.setting("appendonly no")
				.setting("dir " + Files.createTempDirectory("bench-redis"))
				.build();
			server.start();
			return server;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static void stop(RedisServer server) {
		try {
			server.stop();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * A replica.
	 * @param properties its configuration
	 * @return the running context
	 */
	static AnnotationConfigApplicationContext replica(Map<String, Object> properties) {
		return replica(properties, List.of());
	}

	/**
	 * A replica whose events also go to {@code listeners}.
	 * @param properties its configuration
	 * @param listeners listeners added before it starts
	 * @return the running context
	 */
	static AnnotationConfigApplicationContext replica(Map<String, Object> properties,
			List<ApplicationListener<?>> listeners) {
		AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
		context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("replica", properties));
		listeners.forEach(context::addApplicationListener);
		context.register(Replica.class);
		context.refresh();
		return context;
	}

	/**
	 * Properties of a replica sharing state on Redis.
	 * @param redisPort the Redis port
	 * @param name the replica's name
	 * @return the properties, to add to
	 */
	static Map<String, Object> shared(int redisPort, String name) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("spring.data.redis.host", "127.0.0.1");
		properties.put("spring.data.redis.port", redisPort);
		properties.put("llm.shared-state.type", "redis");
		properties.put("llm.shared-state.replica-name", name);
		return properties;
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DataRedisReactiveAutoConfiguration.class,
			LlmAutoConfiguration.class })
	static class Replica {

	}

}
