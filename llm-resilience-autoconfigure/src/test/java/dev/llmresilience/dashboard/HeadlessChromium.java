package dev.llmresilience.dashboard;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.awaitility.Awaitility.await;

/**
 * A real headless Chromium with one page open, driven over the DevTools protocol (a WebSocket, with
 * the JDK's own client): the page's JavaScript runs as in a user's browser, and the test reads what
 * the page shows by evaluating expressions in it.
 */
final class HeadlessChromium implements AutoCloseable {

	private static final List<String> NAMES = List.of("chromium", "chromium-browser", "google-chrome",
			"google-chrome-stable", "chrome");

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final Process process;

	private final Path profile;

	private final WebSocket socket;

	private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

	private final AtomicInteger ids = new AtomicInteger();

	private HeadlessChromium(Process process, Path profile, String webSocketUrl) {
		this.process = process;
		this.profile = profile;
		this.socket = HttpClient.newHttpClient()
			.newWebSocketBuilder()
			.buildAsync(URI.create(webSocketUrl), new Listener())
			.join();
	}

	/**
	 * The Chromium of this machine: {@code $CHROMIUM}, else the first of the usual names on the PATH.
	 * @return its path, or empty when there is none
	 */
	static Optional<Path> find() {
		String configured = System.getenv("CHROMIUM");
		if (configured != null && !configured.isBlank()) {
			return Optional.of(Path.of(configured)).filter(Files::isExecutable);
		}
		String path = System.getenv().getOrDefault("PATH", "");
		return Stream.of(path.split(File.pathSeparator))
			.flatMap((directory) -> NAMES.stream().map((name) -> Path.of(directory, name)))
			.filter(Files::isExecutable)
			.findFirst();
	}

	/**
	 * Start Chromium with one page at the given URL.
	 * @param binary the browser
	 * @param url the page
	 * @return the browser
	 * @throws IOException if it cannot be started
	 */
	static HeadlessChromium open(Path binary, String url) throws IOException {
		Path profile = Files.createTempDirectory("llm-dashboard-chromium");
		Process process = new ProcessBuilder(binary.toString(), "--headless=new", "--no-sandbox", "--disable-gpu",
				"--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
				"--user-data-dir=" + profile, "--remote-debugging-port=0", "--remote-allow-origins=*", url)
			.redirectErrorStream(true)
			.redirectOutput(profile.resolve("chromium.log").toFile())
			.start();
		try {
			Path portFile = profile.resolve("DevToolsActivePort");
			// generous: a first start on a loaded machine builds the profile
			await("Chromium's DevTools port").atMost(Duration.ofSeconds(60))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> Files.isRegularFile(portFile) && Files.readAllLines(portFile).size() >= 2);
			int port = Integer.parseInt(Files.readAllLines(portFile).get(0).trim());
			String webSocketUrl = await("the page's DevTools target").atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> pageTarget(port), Optional::isPresent)
				.orElseThrow();
			return new HeadlessChromium(process, profile, webSocketUrl);
		}
		catch (RuntimeException ex) {
			process.destroyForcibly();
			throw ex;
		}
	}

	private static Optional<String> pageTarget(int port) throws IOException, InterruptedException {
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list")).build(),
					HttpResponse.BodyHandlers.ofString());
		for (JsonNode target : JSON.readTree(response.body())) {
			if ("page".equals(target.path("type").asString())) {
				return Optional.of(target.get("webSocketDebuggerUrl").asString());
			}
		}
		return Optional.empty();
	}

	/**
	 * Evaluate a JavaScript expression in the page.
	 * @param expression the expression; its value (or what its promise resolves to) must be a string, a
	 * number, a boolean or null
	 * @return its value as text ({@code "null"} for null or undefined)
	 */
	String evaluate(String expression) {
		int id = this.ids.incrementAndGet();
		CompletableFuture<JsonNode> answer = new CompletableFuture<>();
		this.pending.put(id, answer);
		String message = JSON.writeValueAsString(Map.of("id", id, "method", "Runtime.evaluate", "params",
				Map.of("expression", expression, "returnByValue", true, "awaitPromise", true)));
		this.socket.sendText(message, true).join();
		JsonNode result = answer.orTimeout(30, TimeUnit.SECONDS).join().path("result").path("result");
		JsonNode value = result.path("value");
		return (value.isMissingNode() || value.isNull()) ? "null" : value.asString();
	}

	/**
	 * What Chromium printed, for a failure message.
	 * @return its output
	 */
	String log() {
		try {
			return Files.readString(this.profile.resolve("chromium.log"));
		}
		catch (IOException ex) {
			return "(no log: " + ex + ")";
		}
	}

	@Override
	public void close() throws Exception {
		this.socket.abort();
		this.process.destroy();
		if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
			this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
		// Chromium's helper processes may still remove files of their own from the profile: a walk
		// that meets a file gone meanwhile is walked again, and what is left after three is left
		for (int walk = 0; walk < 3 && Files.exists(this.profile); walk++) {
			try (Stream<Path> files = Files.walk(this.profile)) {
				files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
			}
			catch (java.io.UncheckedIOException ex) {
				// a file went while it was listed: walk again
			}
		}
	}

	/** Collects each answer (messages may come in pieces) and hands it to the call that waits for it. */
	private final class Listener implements WebSocket.Listener {

		private final StringBuilder text = new StringBuilder();

		@Override
		public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
			this.text.append(data);
			if (last) {
				JsonNode message = JSON.readTree(this.text.toString());
				this.text.setLength(0);
				if (message.has("id")) {
					CompletableFuture<JsonNode> answer = HeadlessChromium.this.pending.remove(message.get("id").asInt());
					if (answer != null) {
						answer.complete(message);
					}
				}
			}
			webSocket.request(1);
			return null;
		}

	}

}
