package dev.llmresilience.engine;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP forwarder on loopback between a replica and Redis that can lose one reply: once
 * {@link #loseReplyTo armed} with a marker, the first command that carries it (a script's SHA-1 in
 * {@code EVALSHA}, or a line of its body in {@code EVAL}) is forwarded to Redis, which runs it, but
 * from then on nothing Redis sends on that connection reaches the client, and the connection is
 * closed once Redis has answered: the client sees its connection lost, not the reply. Every other
 * byte goes through untouched, and new connections (the client reconnecting) are forwarded again,
 * unless the loss also {@link #loseReplyAndPartition partitions} the client from Redis: then every
 * connection is cut with the reply, and new ones are closed as they come, until {@link #heal}.
 */
final class RedisFaultProxy implements AutoCloseable {

	/** How long Redis must stay silent after its reply before the connection is cut. */
	private static final long QUIET_MILLIS = 100;

	private final ServerSocket server;

	private final int redisPort;

	private final ExecutorService threads = Executors.newCachedThreadPool((runnable) -> {
		Thread thread = new Thread(runnable, "redis-fault-proxy");
		thread.setDaemon(true);
		return thread;
	});

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final AtomicReference<List<byte[]>> armed = new AtomicReference<>();

	private final AtomicInteger lost = new AtomicInteger();

	/** Commands forwarded that carry a watched marker, by marker. */
	private final java.util.Map<String, AtomicInteger> watched = new java.util.concurrent.ConcurrentHashMap<>();

	/** Whether the armed loss cuts the client off from Redis too. */
	private volatile boolean partitionOnLoss;

	private volatile boolean partitioned;

	RedisFaultProxy(int redisPort) {
		try {
			this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.redisPort = redisPort;
		this.threads.execute(this::accept);
	}

	int port() {
		return this.server.getLocalPort();
	}

	/**
	 * Lose the reply to the next command that carries any of these markers (once).
	 * @param markers strings of the command, e.g. a script's SHA-1 and a line of its body
	 */
	void loseReplyTo(String... markers) {
		this.partitionOnLoss = false;
		this.armed.set(List.of(markers).stream().map((marker) -> marker.getBytes(StandardCharsets.UTF_8)).toList());
	}

	/**
	 * Lose the reply to the next command that carries any of these markers, and from then on cut
	 * the client off from Redis (its connections closed, new ones refused) until {@link #heal}: as
	 * seen from Redis and the other replicas, the client died the moment its command ran.
	 * @param markers strings of the command
	 */
	void loseReplyAndPartition(String... markers) {
		loseReplyTo(markers);
		this.partitionOnLoss = true;
	}

	/** Whether the client is cut off from Redis. */
	boolean partitioned() {
		return this.partitioned;
	}

	/**
	 * Count the reads forwarded to Redis that carry this marker, e.g. a script's SHA-1.
	 * @param marker a string of the command
	 */
	void watch(String marker) {
		this.watched.putIfAbsent(marker, new AtomicInteger());
	}

	/**
	 * How many reads forwarded to Redis carried a watched marker so far.
	 * @param marker the marker
	 * @return the count (a marker split across two reads may count twice)
	 */
	int seen(String marker) {
		return this.watched.getOrDefault(marker, new AtomicInteger()).get();
	}

	/** Let the client reach Redis again. */
	void heal() {
		this.partitioned = false;
	}

	/**
	 * Replies lost so far: commands Redis ran whose reply the client never got.
	 * @return the count
	 */
	int lost() {
		return this.lost.get();
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket client = this.server.accept();
				if (this.partitioned) {
					closeQuietly(client);
					continue;
				}
				Socket redis = new Socket(InetAddress.getLoopbackAddress(), this.redisPort);
				client.setTcpNoDelay(true);
				redis.setTcpNoDelay(true);
				this.sockets.add(client);
				this.sockets.add(redis);
				Connection connection = new Connection(client, redis);
				this.threads.execute(connection::toRedis);
				this.threads.execute(connection::toClient);
			}
			catch (IOException ex) {
				// closed, or one connection failed: the client connects again
			}
		}
	}

	@Override
	public void close() {
		try {
			this.server.close();
		}
		catch (IOException ex) {
			// closing anyway
		}
		this.sockets.forEach(RedisFaultProxy::closeQuietly);
		this.threads.shutdownNow();
	}

	private static void closeQuietly(Socket socket) {
		try {
			socket.close();
		}
		catch (IOException ex) {
			// closing anyway
		}
	}

	/** One client connection and its own connection to Redis. */
	private final class Connection {

		private final Socket client;

		private final Socket redis;

		/** Set once the marked command went to Redis: what Redis sends from then on is dropped. */
		private volatile boolean cutting;

		Connection(Socket client, Socket redis) {
			this.client = client;
			this.redis = redis;
		}

		void toRedis() {
			// the tail of what came before, so that a marker split across two reads is still seen
			byte[] window = new byte[0];
			try (InputStream in = this.client.getInputStream(); OutputStream out = this.redis.getOutputStream()) {
				byte[] buffer = new byte[16 * 1024];
				for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
					byte[] seen = concat(window, buffer, read);
					List<byte[]> markers = RedisFaultProxy.this.armed.get();
					if (!this.cutting && markers != null && markers.stream().anyMatch((marker) -> contains(seen, marker))
							&& RedisFaultProxy.this.armed.compareAndSet(markers, null)) {
						this.cutting = true;
					}
					RedisFaultProxy.this.watched.forEach((marker, count) -> {
						if (contains(seen, marker.getBytes(StandardCharsets.UTF_8))) {
							count.incrementAndGet();
						}
					});
					out.write(buffer, 0, read);
					out.flush();
					window = tail(seen, 256);
				}
			}
			catch (IOException ex) {
				// either side went away
			}
			finally {
				close();
			}
		}

		void toClient() {
			try (InputStream in = this.redis.getInputStream(); OutputStream out = this.client.getOutputStream()) {
				byte[] buffer = new byte[16 * 1024];
				for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
					if (this.cutting) {
						// Redis has answered the marked command (replies come in order): the client gets none of it
						if (RedisFaultProxy.this.partitionOnLoss) {
							RedisFaultProxy.this.partitioned = true;
							RedisFaultProxy.this.sockets.forEach(RedisFaultProxy::closeQuietly);
						}
						RedisFaultProxy.this.lost.incrementAndGet();
						this.redis.setSoTimeout((int) QUIET_MILLIS);
						drainUntilQuiet(in, buffer);
						return;
					}
					out.write(buffer, 0, read);
					out.flush();
				}
			}
			catch (IOException ex) {
				// either side went away
			}
			finally {
				close();
			}
		}

		private void drainUntilQuiet(InputStream in, byte[] buffer) throws IOException {
			try {
				while (in.read(buffer) >= 0) {
					// more replies pipelined behind it are lost with the connection too
				}
			}
			catch (java.net.SocketTimeoutException ex) {
				// Redis is done: the connection goes
			}
		}

		private void close() {
			closeQuietly(this.client);
			closeQuietly(this.redis);
		}

	}

	private static byte[] concat(byte[] window, byte[] buffer, int read) {
		byte[] all = new byte[window.length + read];
		System.arraycopy(window, 0, all, 0, window.length);
		System.arraycopy(buffer, 0, all, window.length, read);
		return all;
	}

	private static byte[] tail(byte[] bytes, int length) {
		int from = Math.max(0, bytes.length - length);
		byte[] tail = new byte[bytes.length - from];
		System.arraycopy(bytes, from, tail, 0, tail.length);
		return tail;
	}

	private static boolean contains(byte[] haystack, byte[] needle) {
		outer: for (int i = 0; i + needle.length <= haystack.length; i++) {
			for (int j = 0; j < needle.length; j++) {
				if (haystack[i + j] != needle[j]) {
					continue outer;
				}
			}
			return true;
		}
		return false;
	}

}
