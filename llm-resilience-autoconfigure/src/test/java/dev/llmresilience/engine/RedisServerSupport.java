package dev.llmresilience.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

import redis.embedded.RedisServer;

/**
 * A real redis-server (6.2, the binary shipped in the embedded-redis jar) on a free loopback port,
 * with no persistence: stopping it loses its data, as a Redis restarted without AOF or RDB does.
 * Nothing to install: {@code ./mvnw verify} needs only a JDK.
 */
public final class RedisServerSupport implements AutoCloseable {

	private final int port;

	private final Path dir;

	private RedisServer server;

	private RedisServerSupport(int port, Path dir) {
		this.port = port;
		this.dir = dir;
	}

	/**
	 * Wait, if need be, until a test that needs {@code needed} of real time cannot cross the top of
	 * an hour: the shared guard's window is an hour of Redis's clock (this machine's), and the
	 * budget's a day, so a count made across the boundary is split between two windows. At most a
	 * wait of {@code needed}, and only when the test starts that close to the hour.
	 * @param needed the real time the test takes at most
	 */
	public static void clearOfTheHour(Duration needed) {
		clearOf(ChronoUnit.HOURS, needed);
	}

	/**
	 * Wait, if need be, until a test that takes {@code needed} of real time cannot cross the end
	 * of the clock's current {@code unit} (an hour, a minute).
	 * @param unit the clock's unit whose end is to be kept clear of
	 * @param needed the real time the test takes at most
	 */
	public static void clearOf(ChronoUnit unit, Duration needed) {
		Instant now = Instant.now();
		Instant next = now.truncatedTo(unit).plus(unit.getDuration());
		if (Duration.between(now, next).compareTo(needed) < 0) {
			try {
				// a real clock boundary of a real server: no virtual time can move it
				Thread.sleep(Duration.between(now, next).plusSeconds(1).toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Start a server on a free port.
	 * @return the running server
	 */
	public static RedisServerSupport start() {
		try {
			RedisServerSupport redis = new RedisServerSupport(freePort(), Files.createTempDirectory("llm-redis"));
			redis.startAgain();
			return redis;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Start the server again on the same port (after {@link #stop()}), empty. */
	public void startAgain() {
		try {
			this.server = RedisServer.newRedisServer()
				.port(this.port)
				.bind("127.0.0.1")
				.setting("save \"\"")
				.setting("appendonly no")
				.setting("dir " + this.dir)
				.setting("protected-mode yes")
				.build();
			this.server.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Stop the server: connections are refused until {@link #startAgain()}. */
	public void stop() {
		try {
			this.server.stop();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	public int port() {
		return this.port;
	}

	@Override
	public void close() {
		if (this.server != null && this.server.isActive()) {
			stop();
		}
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

}
