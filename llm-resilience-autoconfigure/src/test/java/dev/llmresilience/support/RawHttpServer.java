package dev.llmresilience.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP server on loopback that reads one HTTP request per connection and then misbehaves below
 * HTTP: resets the connection, closes it without a byte, writes bytes that are not HTTP, or breaks
 * the chunked encoding. MockWebServer writes valid HTTP only, so these faults need a raw socket.
 */
public final class RawHttpServer implements AutoCloseable {

	private final ServerSocket server;

	private final Behaviour behaviour;

	private final ExecutorService threads = Executors.newCachedThreadPool((runnable) -> {
		Thread thread = new Thread(runnable, "raw-http-server");
		thread.setDaemon(true);
		return thread;
	});

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final List<String> requestHeads = new CopyOnWriteArrayList<>();

	private final AtomicInteger requests = new AtomicInteger();

	private RawHttpServer(Behaviour behaviour) throws IOException {
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		this.behaviour = behaviour;
		this.threads.execute(this::accept);
	}

	/**
	 * Start a server that answers every request the same way.
	 * @param behaviour what it does once it has read a request
	 * @return the started server
	 */
	public static RawHttpServer start(Behaviour behaviour) {
		try {
			return new RawHttpServer(behaviour);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	public String baseUrl() {
		return "http://127.0.0.1:" + this.server.getLocalPort() + "/v1";
	}

	/**
	 * Requests read in full so far.
	 * @return the count
	 */
	public int requests() {
		return this.requests.get();
	}

	/**
	 * The request line and headers of every request read.
	 * @return the heads, in order
	 */
	public List<String> requestHeads() {
		return List.copyOf(this.requestHeads);
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket socket = this.server.accept();
				this.sockets.add(socket);
				this.threads.execute(() -> serve(socket));
			}
			catch (IOException ex) {
				return; // closed
			}
		}
	}

	private void serve(Socket socket) {
		try {
			InputStream in = socket.getInputStream();
			String head = readHead(in);
			if (head == null) {
				socket.close();
				return;
			}
			in.readNBytes(contentLength(head));
			this.requestHeads.add(head);
			this.requests.incrementAndGet();
			this.behaviour.respond(socket, socket.getOutputStream());
		}
		catch (IOException ex) {
			// the client went away: nothing to do
		}
	}

	/**
	 * Read a request's head, up to and with its blank line.
	 * @param in the connection's input
	 * @return the head, or {@code null} when the connection ended first
	 * @throws IOException when reading fails
	 */
	public static String readHead(InputStream in) throws IOException {
		ByteArrayOutputStream head = new ByteArrayOutputStream();
		int matched = 0;
		byte[] end = { '\r', '\n', '\r', '\n' };
		int next;
		while ((next = in.read()) != -1) {
			head.write(next);
			matched = (next == end[matched]) ? matched + 1 : ((next == '\r') ? 1 : 0);
			if (matched == end.length) {
				return head.toString(StandardCharsets.ISO_8859_1);
			}
		}
		return null;
	}

	/**
	 * A request head's {@code Content-Length}.
	 * @param head the head
	 * @return its value, 0 without one
	 */
	public static int contentLength(String head) {
		for (String line : head.split("\r\n")) {
			if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
				return Integer.parseInt(line.substring("content-length:".length()).trim());
			}
		}
		return 0;
	}

	@Override
	public void close() {
		try {
			this.server.close();
		}
		catch (IOException ex) {
			// already closed
		}
		for (Socket socket : this.sockets) {
			try {
				socket.close();
			}
			catch (IOException ex) {
				// already closed
			}
		}
		this.threads.shutdownNow();
	}

	/** What the server does with a connection once it has read a request. */
	@FunctionalInterface
	public interface Behaviour {

		void respond(Socket socket, OutputStream out) throws IOException;

		/** Reset the connection (TCP RST) without writing anything. */
		static Behaviour reset() {
			return (socket, out) -> rst(socket);
		}

		/** Close the connection (TCP FIN) without writing anything. */
		static Behaviour closeWithoutAnswer() {
			return (socket, out) -> socket.close();
		}

		/** Write the bytes, then reset the connection. */
		static Behaviour writeThenReset(byte[] bytes) {
			return (socket, out) -> {
				out.write(bytes);
				out.flush();
				rst(socket);
			};
		}

		/** Write the bytes, then close the connection. */
		static Behaviour writeThenClose(byte[] bytes) {
			return (socket, out) -> {
				out.write(bytes);
				out.flush();
				socket.close();
			};
		}

		/** Write the bytes and keep the connection open until the server closes. */
		static Behaviour writeThenHold(byte[] bytes) {
			return (socket, out) -> {
				out.write(bytes);
				out.flush();
			};
		}

		private static void rst(Socket socket) throws IOException {
			// SO_LINGER 0 makes close() send RST instead of FIN: a connection reset by the peer
			socket.setSoLinger(true, 0);
			socket.close();
		}

	}

}
