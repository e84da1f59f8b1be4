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
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.support.Answers;
import dev.llmresilience.support.RawHttpServer;
import tools.jackson.databind.json.JsonMapper;

/**
 * A local OpenAI-compatible provider on a raw socket that tells the test where a deferred request's
 * life is, so that the replica running it can be killed there. Callers say who they are by the
 * path: {@code /child/v1} (the replica to be killed), {@code /survivor/v1}, {@code /warm/v1} (a
 * child warming its JVM, answered at once). A child's first call of a prompt fails (503), so the
 * request is deferred; its background attempt is then held open, or answered, as the run's
 * {@link Run} says. The survivor is always answered. Each answer names who it went to, and is
 * signalled once its last byte is written and flushed: the point after which the answer is the
 * caller's.
 */
final class KillPointProvider implements AutoCloseable {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private final ServerSocket server;

	private final ExecutorService threads = Executors.newCachedThreadPool((runnable) -> {
		Thread thread = new Thread(runnable, "kill-point-provider");
		thread.setDaemon(true);
		return thread;
	});

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final Map<String, Run> runs = new ConcurrentHashMap<>();

	KillPointProvider() {
		try {
			this.server = new ServerSocket(0, 100, InetAddress.getLoopbackAddress());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.threads.execute(this::accept);
	}

	String baseUrl(String caller) {
		return "http://127.0.0.1:" + this.server.getLocalPort() + "/" + caller + "/v1";
	}

	/**
	 * What happens to the calls of one prompt.
	 * @param prompt the prompt
	 * @param answerChild whether the child's background attempt is answered (else held open)
	 * @return the run, to wait on and count with
	 */
	Run expect(String prompt, boolean answerChild) {
		Run run = new Run(answerChild);
		this.runs.put(prompt, run);
		return run;
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket socket = this.server.accept();
				this.sockets.add(socket);
				this.threads.execute(() -> serve(socket));
			}
			catch (IOException ex) {
				return;
			}
		}
	}

	private void serve(Socket socket) {
		try (socket) {
			InputStream in = socket.getInputStream();
			String head = RawHttpServer.readHead(in);
			if (head == null) {
				return;
			}
			String body = new String(in.readNBytes(RawHttpServer.contentLength(head)), StandardCharsets.UTF_8);
			String path = head.substring(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
			String prompt = mapper.readTree(body).get("messages").get(0).get("content").asString();
			OutputStream out = socket.getOutputStream();
			if (path.startsWith("/warm/")) {
				write(out, 200, Answers.completionBody("warm"));
				return;
			}
			Run run = this.runs.get(prompt);
			if (run == null) {
				write(out, 500, error("no run expects this prompt"));
			}
			else if (path.startsWith("/survivor/")) {
				write(out, 200, Answers.completionBody("survivor answer to " + prompt));
				run.survivorAnswers.incrementAndGet();
			}
			else if (run.childCalls.incrementAndGet() == 1) {
				write(out, 503, error("overloaded"));
			}
			else if (run.answerChild) {
				write(out, 200, Answers.completionBody("child answer to " + prompt));
				run.childAnswered.countDown();
			}
			else {
				run.childAttempting.countDown();
				// held open: the child is killed while its attempt waits here
				run.released.await(60, TimeUnit.SECONDS);
			}
		}
		catch (IOException | RuntimeException ex) {
			// the caller was killed or went away
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static String error(String message) {
		return "{\"error\":{\"message\":\"" + message + "\",\"type\":\"server_error\"}}";
	}

	private static void write(OutputStream out, int status, String body) throws IOException {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		String head = "HTTP/1.1 " + status + ((status == 200) ? " OK" : " Error") + "\r\n"
				+ "Content-Type: application/json\r\nContent-Length: " + bytes.length + "\r\nConnection: close\r\n\r\n";
		out.write(head.getBytes(StandardCharsets.ISO_8859_1));
		out.write(bytes);
		out.flush();
	}

	@Override
	public void close() {
		this.runs.values().forEach(Run::release);
		try {
			this.server.close();
		}
		catch (IOException ex) {
			// closing anyway
		}
		for (Socket socket : this.sockets) {
			try {
				socket.close();
			}
			catch (IOException ex) {
				// closing anyway
			}
		}
		this.threads.shutdownNow();
	}

	/** The calls of one prompt, as the provider saw them. */
	static final class Run {

		private final boolean answerChild;

		private final AtomicInteger childCalls = new AtomicInteger();

		private final AtomicInteger survivorAnswers = new AtomicInteger();

		private final CountDownLatch childAttempting = new CountDownLatch(1);

		private final CountDownLatch childAnswered = new CountDownLatch(1);

		private final CountDownLatch released = new CountDownLatch(1);

		private Run(boolean answerChild) {
			this.answerChild = answerChild;
		}

		/** Wait until the child's background attempt is here and held. */
		boolean awaitChildAttempting(long seconds) throws InterruptedException {
			return this.childAttempting.await(seconds, TimeUnit.SECONDS);
		}

		/** Wait until the child's answer is written and flushed. */
		boolean awaitChildAnswered(long seconds) throws InterruptedException {
			return this.childAnswered.await(seconds, TimeUnit.SECONDS);
		}

		/** Let a held attempt go (its caller is dead by then: nothing reads the answer). */
		void release() {
			this.released.countDown();
		}

		int childCalls() {
			return this.childCalls.get();
		}

		int survivorAnswers() {
			return this.survivorAnswers.get();
		}

	}

}
