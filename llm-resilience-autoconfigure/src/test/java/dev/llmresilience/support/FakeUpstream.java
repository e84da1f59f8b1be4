package dev.llmresilience.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmAutoConfiguration;
import dev.llmresilience.engine.LlmBreakersEndpointAutoConfiguration;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.engine.LlmMetricsAutoConfiguration;
import dev.llmresilience.gateway.LlmGateway;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * The tests' fake upstream: real local servers (MockWebServer, loopback only), one per endpoint,
 * each speaking a {@link Wire} protocol, tried in the order given, and a context runner with the
 * starter pointed at them and millisecond backoffs so that retries do not slow the tests. A test
 * decides what each server answers: {@link Answers} (JSON, statuses, SSE streams from fixture files,
 * streams cut or stalled after an event) or a protocol's {@link Wire} answers, MockWebServer's own
 * delays and connection drops, a {@link Gate} that holds calls open, or a dispatcher of its own.
 * Faults below HTTP (resets, bytes that are not HTTP) need a raw socket: {@link RawHttpServer}.
 */
public final class FakeUpstream implements AutoCloseable {

	/** The api-key of the {@code primary} endpoint of {@link #start()}. */
	public static final String PRIMARY_KEY = "sk-test-primary-0123456789abcdef";

	/** The api-key of the {@code primary} endpoint of {@link #priced()}. */
	public static final String PRICED_KEY = "sk-operate-test-SECRET-4242";

	private final Map<String, Upstream> upstreams = new LinkedHashMap<>();

	private final List<String> defaults;

	private FakeUpstream(List<String> defaults) {
		this.defaults = defaults;
	}

	/**
	 * Start {@code primary} (model {@code primary-model}, key {@link #PRIMARY_KEY}) and
	 * {@code backup} (priority 1, model {@code backup-model}, no key), both OpenAI-compatible, every
	 * other setting at its default except millisecond backoffs.
	 * @return the started upstreams
	 */
	public static FakeUpstream start() {
		return new FakeUpstream(List.of("llm.defaults.retry.initial-backoff=1ms", "llm.defaults.retry.max-backoff=4ms"))
			.add("primary", (url) -> List.of("llm.endpoints.primary.base-url=" + url.apply("/v1"),
					"llm.endpoints.primary.model=primary-model", "llm.endpoints.primary.api-key=" + PRIMARY_KEY))
			.add("backup", (url) -> List.of("llm.endpoints.backup.base-url=" + url.apply("/v1"),
					"llm.endpoints.backup.model=backup-model", "llm.endpoints.backup.priority=1"));
	}

	/**
	 * Start {@code primary} (model {@code gpt-test}, key {@link #PRICED_KEY}, $2 and $8 per million
	 * tokens in and out) and {@code backup} (priority 1, model {@code small-test}, $1 and $4), both
	 * OpenAI-compatible: for the tests of what an operator sees, costs included.
	 * @return the started upstreams
	 */
	public static FakeUpstream priced() {
		return new FakeUpstream(List.of("llm.defaults.retry.initial-backoff=1ms", "llm.defaults.retry.max-backoff=2ms"))
			.add("primary",
					(url) -> List.of("llm.endpoints.primary.base-url=" + url.apply("/v1"),
							"llm.endpoints.primary.model=gpt-test", "llm.endpoints.primary.api-key=" + PRICED_KEY,
							"llm.endpoints.primary.price.input-per-million=2.0",
							"llm.endpoints.primary.price.output-per-million=8.0"))
			.add("backup",
					(url) -> List.of("llm.endpoints.backup.base-url=" + url.apply("/v1"),
							"llm.endpoints.backup.model=small-test", "llm.endpoints.backup.priority=1",
							"llm.endpoints.backup.price.input-per-million=1.0",
							"llm.endpoints.backup.price.output-per-million=4.0"));
	}

	/**
	 * Start {@code primary} and {@code backup}, both speaking one protocol.
	 * @param wire the protocol
	 * @return the started upstreams
	 */
	public static FakeUpstream start(Wire wire) {
		Map<String, Wire> endpoints = new LinkedHashMap<>();
		endpoints.put("primary", wire);
		endpoints.put("backup", wire);
		return start(endpoints);
	}

	/**
	 * Start one server per endpoint, each at its protocol's properties ({@link Wire#properties}) and
	 * at priority 0, 1, ... in the order given.
	 * @param endpoints the endpoints' names and protocols, in the order the default route tries them
	 * @return the started upstreams
	 */
	public static FakeUpstream start(Map<String, Wire> endpoints) {
		FakeUpstream started = new FakeUpstream(
				List.of("llm.defaults.retry.initial-backoff=1ms", "llm.defaults.retry.max-backoff=4ms"));
		endpoints.forEach((name, wire) -> {
			int priority = started.upstreams.size();
			started.add(name, (url) -> {
				List<String> properties = new ArrayList<>(wire.properties(name, started.server(name)));
				properties.add("llm.endpoints." + name + ".priority=" + priority);
				return properties;
			});
		});
		return started;
	}

	/**
	 * Start one OpenAI-compatible server per name, for endpoints of those names (model
	 * {@code <name>-model}, no key, all at priority 0) and nothing else: for tests that set their own
	 * dispatchers and settings.
	 * @param names the endpoints' names
	 * @return the started upstreams
	 */
	public static FakeUpstream of(String... names) {
		FakeUpstream started = new FakeUpstream(List.of());
		for (String name : names) {
			started.add(name, (url) -> List.of("llm.endpoints." + name + ".base-url=" + url.apply("/v1"),
					"llm.endpoints." + name + ".model=" + name + "-model"));
		}
		return started;
	}

	private FakeUpstream add(String name, Function<Function<String, String>, List<String>> properties) {
		MockWebServer server = new MockWebServer();
		this.upstreams.put(name, new Upstream(server, properties));
		try {
			server.start();
		}
		catch (IOException ex) {
			close();
			throw new UncheckedIOException(ex);
		}
		return this;
	}

	/** @return the server of {@code primary} */
	public MockWebServer primary() {
		return server("primary");
	}

	/** @return the server of {@code backup} */
	public MockWebServer backup() {
		return server("backup");
	}

	/**
	 * The server of an endpoint.
	 * @param name the endpoint's name
	 * @return its server
	 */
	public MockWebServer server(String name) {
		Upstream upstream = this.upstreams.get(name);
		if (upstream == null) {
			throw new IllegalArgumentException("No upstream '" + name + "'");
		}
		return upstream.server();
	}

	/**
	 * The properties of every endpoint, for a runner or an application of the test's own.
	 * @param more further properties, after these
	 * @return the properties
	 */
	public String[] properties(String... more) {
		List<String> all = new ArrayList<>(this.defaults);
		for (Upstream upstream : this.upstreams.values()) {
			all.addAll(upstream.properties().apply((path) -> upstream.server().url(path).toString()));
		}
		all.addAll(List.of(more));
		return all.toArray(String[]::new);
	}

	/**
	 * A runner with the starter and every endpoint.
	 * @return the runner
	 */
	public ApplicationContextRunner runner() {
		return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
			.withPropertyValues(properties());
	}

	/**
	 * A runner with Boot's metrics (a simple registry), the starter and its meters, and every
	 * endpoint.
	 * @return the runner
	 */
	public ApplicationContextRunner withMeters() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
					LlmAutoConfiguration.class, LlmMetricsAutoConfiguration.class))
			.withPropertyValues(properties());
	}

	/**
	 * A runner with Boot's metrics (a simple registry), the starter, its meters and
	 * {@code /actuator/llmbreakers} (exposed over the web), and every endpoint.
	 * @return the runner
	 */
	public ApplicationContextRunner withActuator() {
		return withMeters().withConfiguration(AutoConfigurations.of(LlmBreakersEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=llmbreakers");
	}

	@Override
	public void close() {
		this.upstreams.values().forEach((upstream) -> upstream.server().close());
	}

	/**
	 * Call the gateway and wait for its answer.
	 * @param context a context from {@link #runner()}
	 * @param request the request
	 * @return the answer
	 */
	public static ChatResponse chat(ApplicationContext context, ChatRequest request) {
		return context.getBean(LlmGateway.class).chat(request).block(Duration.ofSeconds(20));
	}

	/**
	 * Call the gateway with one user message and wait for its answer.
	 * @param context a context from {@link #runner()}
	 * @return the answer
	 */
	public static ChatResponse chat(ApplicationContext context) {
		return chat(context, ChatRequest.ofUser("hello"));
	}

	public static LlmEndpoint endpoint(ApplicationContext context, String name) {
		LlmEndpoint endpoint = context.getBean(EndpointRegistry.class).endpoint(name);
		if (endpoint == null) {
			throw new IllegalArgumentException("No endpoint '" + name + "'");
		}
		return endpoint;
	}

	/**
	 * One endpoint's server.
	 *
	 * @param server its server
	 * @param properties its properties, given the server's URL of a path
	 */
	private record Upstream(MockWebServer server, Function<Function<String, String>, List<String>> properties) {
	}

	/**
	 * A dispatcher that holds every request until {@link #open()}, then answers it with one
	 * response: a call that stays in flight for as long as a test needs, without sleeping.
	 */
	public static final class Gate extends Dispatcher {

		private final CountDownLatch opened = new CountDownLatch(1);

		private final MockResponse response;

		public Gate(MockResponse response) {
			this.response = response;
		}

		@Override
		public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
			this.opened.await(20, TimeUnit.SECONDS);
			return this.response;
		}

		public void open() {
			this.opened.countDown();
		}

		@Override
		public void close() {
			open();
		}

	}

}
