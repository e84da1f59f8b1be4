package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
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
 * Named {@link FakeUpstream} servers for the balancing tests, each answering with its own name as
 * the content, and switchable at run time to answer slowly or to fail; a context runner with the
 * starter, its actuator endpoint and its meters pointed at them. Loopback only.
 */
final class BalancedUpstreams implements AutoCloseable {

	private final FakeUpstream servers;

	private final Map<String, Upstream> upstreams = new LinkedHashMap<>();

	BalancedUpstreams(String... names) {
		this.servers = FakeUpstream.of(names);
		for (String name : names) {
			this.upstreams.put(name, new Upstream(name, this.servers.server(name)));
		}
	}

	Upstream get(String name) {
		return this.upstreams.get(name);
	}

	/**
	 * A runner with one endpoint per server (model {@code <name>-model}, priority 0, one attempt
	 * each, so a failure moves on at once), the actuator endpoint and a simple meter registry.
	 * @param more further properties
	 * @return the runner
	 */
	ApplicationContextRunner runner(String... more) {
		List<String> properties = new ArrayList<>(List.of(this.servers.properties()));
		properties.add("llm.defaults.retry.max-attempts=1");
		properties.add("management.endpoints.web.exposure.include=llmbreakers");
		properties.addAll(List.of(more));
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
					LlmAutoConfiguration.class, LlmBreakersEndpointAutoConfiguration.class,
					LlmMetricsAutoConfiguration.class))
			.withPropertyValues(properties.toArray(String[]::new));
	}

	/**
	 * What {@code /actuator/llmbreakers} says of a route's balancing.
	 * @param context the context
	 * @param route the route
	 * @return its descriptor
	 */
	static RouteBalanceDescriptor balancing(ApplicationContext context, String route) {
		return context.getBean(LlmBreakersEndpoint.class).breakers().balancing().get(route);
	}

	@Override
	public void close() {
		this.servers.close();
	}

	/** One server's answers: its name, after {@link #delay} if set, or {@link #status} if not 200. */
	static final class Upstream extends Dispatcher {

		final MockWebServer server;

		private final String name;

		private final AtomicLong requests = new AtomicLong();

		private volatile Duration delay = Duration.ZERO;

		private volatile int status = 200;

		Upstream(String name, MockWebServer server) {
			this.name = name;
			this.server = server;
			this.server.setDispatcher(this);
		}

		@Override
		public MockResponse dispatch(RecordedRequest request) {
			this.requests.incrementAndGet();
			if (this.status != 200) {
				return Answers.error(this.status, "server_error");
			}
			return new MockResponse.Builder(Answers.completion(this.name))
				.headersDelay(this.delay.toMillis(), TimeUnit.MILLISECONDS)
				.build();
		}

		/** @return the requests it received */
		long requests() {
			return this.requests.get();
		}

		void answerAfter(Duration delay) {
			this.delay = delay;
		}

		void failWith(int status) {
			this.status = status;
		}

	}

}
