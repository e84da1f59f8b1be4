package dev.llmresilience.engine;

import java.util.List;
import java.util.Map;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.LlmProperties;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.test.context.ConfigDataApplicationContextInitializer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Both forms of {@code llm.routes.<name>} bind: the list form (comma-separated, indexed, a YAML
 * list) as today's strict priority route, the object form with its endpoints, balance and order.
 */
class RouteFormsTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
		.withPropertyValues("llm.endpoints.a.base-url=http://localhost:9/v1", "llm.endpoints.a.model=model-a",
				"llm.endpoints.b.base-url=http://localhost:9/v1", "llm.endpoints.b.model=model-b");

	@Test
	void aYamlFileMayMixTheListFormAndTheObjectForm() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
			.withInitializer(new ConfigDataApplicationContextInitializer())
			.withPropertyValues("spring.config.location=classpath:/balancing-routes.yml")
			.run((context) -> {
				assertThat(routes(context)).containsEntry("default", List.of("b", "a"))
					.containsEntry("spread", List.of("a", "b"))
					.containsEntry("cheap", List.of("a", "b"));
				Map<String, RouteReport> reports = context.getBean(RouteBalancer.class).report();
				assertThat(reports.get("default").strategy()).isEqualTo(RouteStrategy.PRIORITY);
				assertThat(reports.get("spread").strategy())
					.isEqualTo(new RouteStrategy(Balance.WEIGHTED, RouteOrder.PRIORITY));
				assertThat(reports.get("spread").endpoints()).extracting(RouteReport.Member::weight).containsExactly(1.0, 3.0);
				assertThat(reports.get("cheap").strategy())
					.isEqualTo(new RouteStrategy(Balance.PRIORITY, RouteOrder.CHEAPEST_FIRST));
				assertThat(reports.get("cheap").endpoints()).extracting(RouteReport.Member::endpoint).containsExactly("b", "a");
			});
	}

	@Test
	void aCommaSeparatedListIsARouteInPriorityOrder() {
		this.contextRunner.withPropertyValues("llm.routes.cheap=b, a").run((context) -> {
			assertThat(routes(context)).containsEntry("cheap", List.of("b", "a")).containsEntry("default", List.of("a", "b"));
			assertThat(context.getBean(RouteBalancer.class).report().get("cheap").strategy()).isEqualTo(RouteStrategy.PRIORITY);
		});
	}

	@Test
	void anIndexedListIsARouteInPriorityOrder() {
		this.contextRunner.withPropertyValues("llm.routes.cheap[0]=b", "llm.routes.cheap[1]=a")
			.run((context) -> assertThat(routes(context)).containsEntry("cheap", List.of("b", "a")));
	}

	@Test
	void theObjectFormTakesItsEndpointsInOrder() {
		this.contextRunner
			.withPropertyValues("llm.routes.spread.endpoints[0]=b", "llm.routes.spread.endpoints[1]=a",
					"llm.routes.spread.balance=LEAST_LATENCY", "llm.routes.other.endpoints=a,b")
			.run((context) -> {
				assertThat(routes(context)).containsEntry("spread", List.of("b", "a")).containsEntry("other", List.of("a", "b"));
				assertThat(context.getBean(RouteBalancer.class).report().get("spread").strategy().balance())
					.isEqualTo(Balance.LEAST_LATENCY);
			});
	}

	@Test
	void theDefaultRouteMayBeBalancedWithoutListingItsEndpoints() {
		this.contextRunner
			.withPropertyValues("llm.endpoints.off.base-url=http://localhost:9/v1", "llm.endpoints.off.model=m",
					"llm.endpoints.off.enabled=false", "llm.routes.default.balance=weighted")
			.run((context) -> {
				assertThat(routes(context)).containsOnly(Map.entry("default", List.of("a", "b")));
				assertThat(context.getBean(RouteBalancer.class).report().get("default").strategy().balance())
					.isEqualTo(Balance.WEIGHTED);
			});
	}

	@Test
	void anUnknownKeyOfAnObjectFormRouteIsRejectedWhereNoUnknownKeyCheckRan() {
		// a registry of the application's own skips the start-up check of unknown keys; the balancer still reads the routes
		MockEnvironment environment = new MockEnvironment().withProperty("llm.routes.spread.endpoints", "a")
			.withProperty("llm.routes.spread.balanse", "weighted");
		LlmProperties properties = Binder.get(environment).bind("llm", LlmProperties.class).get();
		assertThatExceptionOfType(LlmConfigurationException.class).isThrownBy(() -> RouteForms.of(properties, environment))
			.satisfies((ex) -> assertThat(ex.getProperty()).isEqualTo("llm.routes.spread.balanse"))
			.withMessageContaining("is not a key of a route")
			.withMessageContaining("A route takes endpoints, balance and order");
	}

	private static Map<String, List<String>> routes(ApplicationContext context) {
		return context.getBean(EndpointRegistry.class).routeNames();
	}

}
