package dev.llmresilience.openaiapi;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingStream;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * A Spring MVC application on virtual threads ({@code spring.threads.virtual.enabled=true}): a
 * controller that calls the gateway the blocking way such applications do, plain and streamed, and
 * the OpenAI-compatible API, plain and streamed, each request on a virtual thread; and JFR sees no
 * virtual thread pinned to its carrier ({@code jdk.VirtualThreadPinned}, any duration) while they
 * run. Needs Java 21+, and says so on an older JVM.
 */
class VirtualThreadsServletTests {

	private static final String CLIENT_KEY = "vt-client-key";

	private static final String MESSAGES = "\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]";

	private final HttpClient http = HttpClient.newHttpClient();

	private final Queue<String> pinned = new ConcurrentLinkedQueue<>();

	private FakeUpstream upstreams;

	private ConfigurableApplicationContext context;

	private RecordingStream recording;

	@BeforeEach
	void start() throws Exception {
		assumeThat(Runtime.version().feature()).as("virtual threads and jdk.VirtualThreadPinned need Java 21+; "
				+ "this JVM is %s (.ci/run runs this test on Java 25)", Runtime.version()).isGreaterThanOrEqualTo(21);
		this.upstreams = FakeUpstream.start();
		this.upstreams.primary().setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				String body = request.getBody().utf8();
				return body.contains("\"stream\":true") ? Answers.sse(Answers.stream("Hello", " from", " upstream"))
						: Answers.completion("Hello from upstream");
			}
		});
		this.recording = new RecordingStream();
		this.recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
		this.recording.onEvent("jdk.VirtualThreadPinned", (event) -> this.pinned.add(describe(event)));
		this.recording.startAsync();
		this.context = new SpringApplicationBuilder(App.class).run("--server.port=0", "--spring.main.web-application-type=servlet", "--spring.threads.virtual.enabled=true",
					"--llm.openai-api.enabled=true", "--llm.openai-api.api-keys=" + CLIENT_KEY,
					"--llm.endpoints.primary.base-url=" + this.upstreams.primary().url("/v1"),
					"--llm.endpoints.primary.model=gpt-4o-mini",
					"--llm.endpoints.primary.api-key=" + FakeUpstream.PRIMARY_KEY,
					"--llm.endpoints.backup.base-url=" + this.upstreams.backup().url("/v1"),
					"--llm.endpoints.backup.model=backup-model", "--llm.endpoints.backup.priority=1");
	}

	@AfterEach
	void stop() {
		if (this.context != null) {
			this.context.close();
		}
		if (this.upstreams != null) {
			this.upstreams.close();
		}
		if (this.recording != null) {
			this.recording.close();
		}
	}

	@Test
	void theGatewayPathRunsOnVirtualThreadsAndPinsNoCarrier() throws Exception {
		HttpResponse<String> chat = post("/api/chat", "Hello", null);
		assertThat(chat.statusCode()).isEqualTo(200);
		assertThat(chat.body()).isEqualTo("PRIMARY: Hello from upstream");

		HttpResponse<String> stream = post("/api/chat/stream", "Hello", null);
		assertThat(stream.statusCode()).isEqualTo(200);
		assertThat(stream.body()).isEqualTo("Hello from upstream");

		HttpResponse<String> completion = post("/v1/chat/completions", "{" + MESSAGES + "}", CLIENT_KEY);
		assertThat(completion.statusCode()).isEqualTo(200);
		assertThat(completion.body()).contains("\"content\":\"Hello from upstream\"");

		HttpResponse<String> streamed = post("/v1/chat/completions", "{\"stream\":true," + MESSAGES + "}", CLIENT_KEY);
		assertThat(streamed.statusCode()).isEqualTo(200);
		assertThat(streamed.body()).contains("\"content\":\" upstream\"").endsWith("data: [DONE]\n\n");

		assertThat(this.context.getBean(RequestThreads.class).threads).as("the thread each request was served on").hasSize(4)
			.allSatisfy((thread) -> assertThat(thread).contains("virtual=true"));
		// JFR delivers its events about once a second: wait for a flush that comes after the requests
		flushed();
		assertThat(this.pinned).as("virtual threads pinned to their carrier, with where").isEmpty();
	}

	/** Waits until the recording has delivered what happened up to now. */
	private void flushed() throws InterruptedException {
		CountDownLatch flush = new CountDownLatch(1);
		this.recording.onFlush(flush::countDown);
		assertThat(flush.await(10, TimeUnit.SECONDS)).as("JFR flushed").isTrue();
		CountDownLatch next = new CountDownLatch(1);
		this.recording.onFlush(next::countDown);
		assertThat(next.await(10, TimeUnit.SECONDS)).as("JFR flushed again").isTrue();
	}

	private HttpResponse<String> post(String path, String body, String clientKey)
			throws IOException, InterruptedException {
		int port = Integer.parseInt(this.context.getEnvironment().getRequiredProperty("local.server.port"));
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", path.startsWith("/v1") ? "application/json" : "text/plain")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (clientKey != null) {
			request.header("Authorization", "Bearer " + clientKey);
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static String describe(RecordedEvent event) {
		StringBuilder text = new StringBuilder("pinned for ").append(event.getDuration());
		if (event.getStackTrace() != null) {
			for (RecordedFrame frame : event.getStackTrace().getFrames()) {
				text.append("\n  at ").append(frame.getMethod().getType().getName()).append('.')
					.append(frame.getMethod().getName()).append(':').append(frame.getLineNumber());
			}
		}
		return text.toString();
	}

	/** Whether the current thread is virtual, asked by name: the tests compile for Java 17. */
	private static boolean isVirtual() {
		try {
			return (boolean) Thread.class.getMethod("isVirtual").invoke(Thread.currentThread());
		}
		catch (ReflectiveOperationException ex) {
			return false;
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		RequestThreads requestThreads() {
			return new RequestThreads();
		}

		@Bean
		AssistantController assistantController(LlmGateway gateway) {
			return new AssistantController(gateway);
		}

	}

	/** Notes the thread of every request, before the OpenAI-compatible API or a controller serves it. */
	static final class RequestThreads implements Filter {

		private final Queue<String> threads = new ConcurrentLinkedQueue<>();

		@Override
		public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
				throws IOException, ServletException {
			this.threads.add(((HttpServletRequest) request).getRequestURI() + " virtual=" + isVirtual());
			chain.doFilter(request, response);
		}

	}

	/** What an MVC application on virtual threads writes: the gateway's answer, waited for. */
	@RestController
	static class AssistantController {

		private final LlmGateway gateway;

		AssistantController(LlmGateway gateway) {
			this.gateway = gateway;
		}

		@PostMapping("/api/chat")
		String chat(@RequestBody String prompt) {
			ChatResponse response = this.gateway.chat(ChatRequest.builder().user(prompt).build()).block();
			return response.tier() + ": " + response.content();
		}

		@PostMapping("/api/chat/stream")
		String stream(@RequestBody String prompt) {
			List<String> chunks = this.gateway.stream(ChatRequest.builder().user(prompt).build())
				.map(ChatChunk::content)
				.collectList()
				.block();
			return String.join("", chunks);
		}

	}

}
