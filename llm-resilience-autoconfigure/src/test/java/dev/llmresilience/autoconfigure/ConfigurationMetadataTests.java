package dev.llmresilience.autoconfigure;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmresilience.endpoint.EndpointRegistry;
import dev.llmresilience.endpoint.EndpointSettings;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The IDE metadata generated from {@link LlmProperties}: every {@code llm.*} key is described, and
 * the built-in default each {@code llm.defaults.*} description states is the one applied.
 */
class ConfigurationMetadataTests {

	private static final Pattern DOCUMENTED_DEFAULT = Pattern
		.compile("Default (\\d+(?:\\.\\d+)?[a-zA-Z]*|[a-z]+(?:-[a-z]+)*)\\b");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
		.withPropertyValues("llm.endpoints.main.base-url=http://localhost:9/v1", "llm.endpoints.main.model=m");

	@Test
	void everyLlmPropertyHasADescription() {
		List<JsonNode> properties = llmProperties();
		assertThat(properties).hasSizeGreaterThan(25);
		assertThat(properties).filteredOn((property) -> !property.hasNonNull("description")
				|| property.get("description").asString().isBlank())
			.extracting((property) -> property.get("name").asString())
			.isEmpty();
	}

	@Test
	void everyDefaultsPropertyStatesItsBuiltInDefault() {
		assertThat(llmProperties()).filteredOn((property) -> property.get("name").asString().startsWith("llm.defaults."))
			.hasSizeGreaterThanOrEqualTo(20)
			.allSatisfy((property) -> assertThat(property.get("description").asString())
				.as(property.get("name").asString())
				.containsPattern(DOCUMENTED_DEFAULT));
	}

	@Test
	void documentedDefaultsAreTheDefaultsApplied() {
		List<String> documented = new ArrayList<>();
		for (JsonNode property : llmProperties()) {
			String name = property.get("name").asString();
			Matcher matcher = DOCUMENTED_DEFAULT.matcher(property.get("description").asString());
			if (name.startsWith("llm.defaults.") && matcher.find()) {
				documented.add(name + "=" + matcher.group(1));
			}
		}
		assertThat(documented).contains("llm.defaults.timeout=60s", "llm.defaults.retry.multiplier=2.0",
				"llm.defaults.circuit-breaker.sliding-window-size=20", "llm.defaults.first-token-timeout=10s",
				"llm.defaults.upstream-streaming=true", "llm.defaults.circuit-breaker.probe=synthetic");
		this.contextRunner.run((builtIn) -> this.contextRunner.withPropertyValues(documented.toArray(String[]::new))
			.run((setToDocumented) -> assertThat(settings(setToDocumented)).isEqualTo(settings(builtIn))));
	}

	@Test
	void balancingKeysAreDescribedWithTheirDefaults() {
		JsonNode limit = property("llm.gateway.max-concurrent-calls");
		assertThat(limit.get("defaultValue").asInt()).isZero();
		assertThat(limit.get("description").asString()).contains("0 switches the limit off").contains("GATEWAY_FULL");
		// map values are not expanded into keys: the route's keys are described on llm.routes itself
		assertThat(property("llm.routes").get("description").asString()).contains("llm.routes.<name>.balance")
			.contains("least-latency")
			.contains("cheapest-first")
			.contains("default priority");
		assertThat(property("llm.routes").get("type").asString()).contains(RouteProperties.class.getName());
	}

	private static JsonNode property(String name) {
		return llmProperties().stream()
			.filter((property) -> property.get("name").asString().equals(name))
			.findFirst()
			.orElseThrow(() -> new AssertionError("No metadata for " + name));
	}

	private static EndpointSettings settings(ApplicationContext context) {
		return context.getBean(EndpointRegistry.class).endpoint("main").settings();
	}

	private static List<JsonNode> llmProperties() {
		Path classes = Path.of(LlmProperties.class.getProtectionDomain().getCodeSource().getLocation().getPath());
		JsonNode metadata = JsonMapper.builder()
			.build()
			.readTree(classes.resolve("META-INF/spring-configuration-metadata.json").toFile());
		List<JsonNode> properties = new ArrayList<>();
		metadata.get("properties").forEach((property) -> {
			if (property.get("name").asString().startsWith("llm.")) {
				properties.add(property);
			}
		});
		return properties;
	}

}
