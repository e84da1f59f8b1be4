package dev.llmresilience.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmresilience.autoconfigure.LlmAutoConfiguration;
import mockwebserver3.MockWebServer;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Local upstreams that each speak a {@link Wire} protocol, one endpoint per server, tried in the
 * order given (priority 0, 1, ...), with millisecond backoffs so that retries do not slow the tests.
 * Loopback only.
 */
public final class ProtocolUpstreams implements AutoCloseable {

	private final Map<String, Upstream> upstreams = new LinkedHashMap<>();

	private ProtocolUpstreams() {
	}

	/**
	 * Start {@code primary} and {@code backup}, both speaking one protocol.
	 * @param wire the protocol
	 * @return the started upstreams
	 */
	public static ProtocolUpstreams start(Wire wire) {
		Map<String, Wire> endpoints = new LinkedHashMap<>();
		endpoints.put("primary", wire);
		endpoints.put("backup", wire);
		return start(endpoints);
	}

	/**
	 * Start one server per endpoint.
	 * @param endpoints the endpoints' names and protocols, in the order the default route tries them
	 * @return the started upstreams
	 */
	public static ProtocolUpstreams start(Map<String, Wire> endpoints) {
		ProtocolUpstreams started = new ProtocolUpstreams();
		endpoints.forEach((name, wire) -> {
			MockWebServer server = new MockWebServer();
			started.upstreams.put(name, new Upstream(name, wire, server));
			try {
				server.start();
			}
			catch (IOException ex) {
				started.close();
				throw new UncheckedIOException(ex);
			}
		});
		return started;
	}

	/**
	 * The server of an endpoint.
	 * @param name the endpoint's name
	 * @return its server
	 */
	public MockWebServer server(String name) {
		return this.upstreams.get(name).server();
	}

	/**
	 * A runner with every endpoint, at its protocol's properties and in the order given.
	 * @return the runner
	 */
	public ApplicationContextRunner runner() {
		List<String> properties = new ArrayList<>(List.of("llm.defaults.retry.initial-backoff=1ms",
				"llm.defaults.retry.max-backoff=4ms"));
		int priority = 0;
		for (Upstream upstream : this.upstreams.values()) {
			properties.addAll(upstream.wire().properties(upstream.name(), upstream.server()));
			properties.add("llm.endpoints." + upstream.name() + ".priority=" + priority++);
		}
		return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
			.withPropertyValues(properties.toArray(String[]::new));
	}

	@Override
	public void close() {
		this.upstreams.values().forEach((upstream) -> upstream.server().close());
	}

	/**
	 * One endpoint's server.
	 *
	 * @param name the endpoint's name
	 * @param wire its protocol
	 * @param server its server
	 */
	public record Upstream(String name, Wire wire, MockWebServer server) {
	}

}
