package dev.llmresilience.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What callers without a valid key cost a running application's OpenAI-compatible API: opens
 * {@code connections} connections at once that each post {@code Content-Length: 4194304} to
 * {@code /v1/chat/completions} with a wrong key, and send 101 bytes of it ({@code -Dbody=partial}),
 * all of it but its last byte ({@code -Dbody=almost}, a server that reads before it checks holds
 * it all, waiting for that byte) or all of it ({@code -Dbody=full}); then, with every connection still
 * open, reads the application's direct buffer memory from its actuator
 * ({@code jvm.buffer.memory.used}, {@code id:direct}) and counts the 401s that came within three
 * seconds. Plain JDK only, so that it runs as a source file:
 *
 * <pre>
 * java -Dconnections=40 -Dbody=full llm-resilience-benchmarks/src/main/java/dev/llmresilience/benchmarks/UnreadBodyFlood.java
 * </pre>
 */
public final class UnreadBodyFlood {

	private static final String BASE = System.getProperty("base", "http://127.0.0.1:8080");

	private static final int CONNECTIONS = Integer.getInteger("connections", 40);

	private static final String BODY = System.getProperty("body", "almost");

	private static final int DECLARED = 4 * 1024 * 1024;

	private static final Duration ANSWER_WITHIN = Duration.ofSeconds(3);

	private static final Pattern VALUE = Pattern.compile("\"value\"\\s*:\\s*([0-9.Ee+-]+)");

	private UnreadBodyFlood() {
	}

	public static void main(String[] args) throws Exception {
		URI base = URI.create(BASE);
		double before = directMegabytes(base);
		AtomicInteger unauthorized = new AtomicInteger();
		AtomicInteger closed = new AtomicInteger();
		ConcurrentHashMap<String, AtomicInteger> others = new ConcurrentHashMap<>();
		CountDownLatch sent = new CountDownLatch(CONNECTIONS);
		List<Socket> sockets = new ArrayList<>();
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < CONNECTIONS; i++) {
			Socket socket = new Socket();
			sockets.add(socket);
			Thread thread = new Thread(() -> {
				try {
					call(socket, base, sent, unauthorized, closed, others);
				}
				catch (IOException ex) {
					others.computeIfAbsent(ex.getClass().getSimpleName(), (key) -> new AtomicInteger()).incrementAndGet();
				}
			});
			thread.setDaemon(true);
			threads.add(thread);
			thread.start();
		}
		sent.await(60, TimeUnit.SECONDS);
		for (Thread thread : threads) {
			thread.join(ANSWER_WITHIN.toMillis() + 1000);
		}
		double during = directMegabytes(base);
		System.out.printf(Locale.ROOT,
				"connections=%d body=%s: direct buffer memory %.1f MB before, %.1f MB with the connections open; "
						+ "401 within %ds: %d; closed by the server after it: %d; other outcomes: %s%n",
				CONNECTIONS, BODY, before, during,
				ANSWER_WITHIN.toSeconds(), unauthorized.get(), closed.get(), others);
		for (Socket socket : sockets) {
			socket.close();
		}
	}

	private static void call(Socket socket, URI base, CountDownLatch sent, AtomicInteger unauthorized,
			AtomicInteger closed, ConcurrentHashMap<String, AtomicInteger> others) throws IOException {
		socket.connect(new InetSocketAddress(base.getHost(), base.getPort()), 5000);
		socket.setSoTimeout((int) ANSWER_WITHIN.toMillis());
		OutputStream out = socket.getOutputStream();
		String head = "POST /v1/chat/completions HTTP/1.1\r\nHost: " + base.getHost() + "\r\n"
				+ "Authorization: Bearer sk-not-a-client-key\r\nContent-Type: application/json\r\n"
				+ "Content-Length: " + DECLARED + "\r\n\r\n";
		try {
			out.write(head.getBytes(StandardCharsets.US_ASCII));
			byte[] start = "{\"messages\":[{\"role\":\"user\",\"content\":\"".getBytes(StandardCharsets.US_ASCII);
			out.write(start);
			byte[] chunk = new byte[64 * 1024];
			java.util.Arrays.fill(chunk, (byte) 'x');
			if (!"partial".equals(BODY)) {
				int unsent = "almost".equals(BODY) ? 1 : 0;
				for (int left = DECLARED - start.length - unsent; left > 0; left -= chunk.length) {
					out.write(chunk, 0, Math.min(left, chunk.length));
				}
			}
			else {
				out.write(chunk, 0, 101 - start.length);
			}
			out.flush();
		}
		catch (IOException ex) {
			// the server closed the connection before the body was sent: what a refusal does
			others.computeIfAbsent("write refused (" + ex.getClass().getSimpleName() + ")", (key) -> new AtomicInteger())
				.incrementAndGet();
		}
		finally {
			sent.countDown();
		}
		InputStream in = socket.getInputStream();
		// a server that reads before it checks answers only once the body is whole
		byte[] status = new byte[12];
		int read = in.readNBytes(status, 0, status.length);
		String line = new String(status, 0, read, StandardCharsets.US_ASCII);
		if (line.endsWith("401")) {
			unauthorized.incrementAndGet();
			try {
				while (in.read(new byte[8192]) != -1) {
					// the rest of the answer
				}
				closed.incrementAndGet();
			}
			catch (java.net.SocketTimeoutException ex) {
				// kept open: the server waits for (or drains) the rest of the body
			}
		}
		else {
			others.computeIfAbsent(line.isEmpty() ? "no answer" : line, (key) -> new AtomicInteger()).incrementAndGet();
		}
	}

	private static double directMegabytes(URI base) throws IOException, InterruptedException {
		HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest
			.newBuilder(base.resolve("/actuator/metrics/jvm.buffer.memory.used?tag=id:direct"))
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
		Matcher value = VALUE.matcher(response.body());
		return value.find() ? Double.parseDouble(value.group(1)) / (1024 * 1024) : Double.NaN;
	}

}
