package dev.llmresilience.dashboard;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.llmresilience.support.FakeUpstream;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A whole Boot application, WebFlux or Servlet, with the starter's auto-configuration and two
 * endpoints at local mock servers, started on a free port as a user's application would be.
 */
final class DashboardApplications {

	private DashboardApplications() {
	}

	static ConfigurableApplicationContext start(WebApplicationType type, FakeUpstream upstreams, String... more) {
		return start(type, upstreams, Map.of(), more);
	}

	/**
	 * Start an application with further properties given as a map, for keys that a command-line
	 * argument cannot hold (an endpoint or route name with an {@code =} in it).
	 */
	static ConfigurableApplicationContext start(WebApplicationType type, FakeUpstream upstreams,
			Map<String, Object> properties, String... more) {
		List<String> arguments = new ArrayList<>(List.of("--spring.main.web-application-type=" + type.name().toLowerCase(),
				"--server.port=0", "--llm.endpoints.primary.base-url=" + upstreams.primary().url("/v1"),
				"--llm.endpoints.primary.model=primary-model", "--llm.endpoints.primary.api-key=" + FakeUpstream.PRIMARY_KEY,
				"--llm.endpoints.backup.base-url=" + upstreams.backup().url("/v1"), "--llm.endpoints.backup.model=backup-model",
				"--llm.endpoints.backup.priority=1", "--llm.endpoints.backup.api-key-required=false",
				"--management.endpoints.web.exposure.include=health,llmbreakers"));
		// a later argument replaces an earlier one of the same key (Boot would join them into a list)
		Map<String, String> byKey = new LinkedHashMap<>();
		Stream.concat(arguments.stream(), Stream.of(more))
			.forEach((argument) -> byKey.put(argument.substring(0, argument.indexOf('=')), argument));
		return new SpringApplicationBuilder(Application.class).properties(properties)
			.run(byKey.values().toArray(String[]::new));
	}

	static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Application {

	}

}
