package dev.llmresilience.engine;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmresilience.autoconfigure.EndpointProperties;
import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.gateway.EndpointSettings;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The IDE metadata generated from {@link LlmProperties} and
 * {@code additional-spring-configuration-metadata.json}, read from the built file: every
 * {@code llm.*} key is described and has its default, every per-endpoint key has an entry of its own
 * ({@code llm.endpoints.*.<key>}), and the defaults stated are the ones applied.
 */
class ConfigurationMetadataTests {

	/** The keys that have no default: required, optional with none, or maps. */
	private static final Set<String> KEYS_WITHOUT_DEFAULT = Set.of("llm.endpoints", "llm.routes", "llm.endpoints.*.base-url",
			"llm.endpoints.*.api-key", "llm.endpoints.*.model", "llm.endpoints.*.region", "llm.endpoints.*.headers",
			"llm.endpoints.*.deployment", "llm.endpoints.*.chat-model-bean", "llm.openai-api.api-keys",
			"llm.endpoints.*.price.input-per-million", "llm.endpoints.*.price.output-per-million",
			"llm.routes.*.endpoints", "llm.gateway.hedge.routes",
			"llm.shared-state.replica-name");

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
		assertThat(defaultValue("llm.gateway.max-concurrent-calls")).isEqualTo("0");
		assertThat(property("llm.gateway.max-concurrent-calls").get("description").asString())
			.contains("0 switches the limit off")
			.contains("GATEWAY_FULL");
		assertThat(defaultValue("llm.endpoints.*.weight")).isEqualTo("1");
		assertThat(defaultValue("llm.routes.*.balance")).isEqualTo("priority");
		assertThat(defaultValue("llm.routes.*.order")).isEqualTo("priority");
		assertThat(property("llm.routes.*.endpoints").get("description").asString()).contains("every enabled endpoint");
		List<String> hinted = new ArrayList<>();
		metadata().get("hints").forEach((hint) -> hint.path("values")
			.forEach((value) -> hinted.add(hint.get("name").asString() + "=" + value.get("value").asString())));
		assertThat(hinted).contains("llm.routes.*.balance=priority", "llm.routes.*.balance=weighted",
				"llm.routes.*.balance=least-latency", "llm.routes.*.order=priority", "llm.routes.*.order=cheapest-first");
		// the values the hints offer are the ones the starter accepts
		for (String value : hinted) {
			if (value.startsWith("llm.routes.*.")) {
				String key = value.substring("llm.routes.*.".length(), value.indexOf('='));
				this.contextRunner.withPropertyValues("llm.routes.default." + key + "=" + value.substring(value.indexOf('=') + 1))
					.run((context) -> assertThat(context).as(value).hasNotFailed());
			}
		}
	}

	@Test
	void everyKeyWithADefaultStatesItInTheMetadata() {
		assertThat(llmProperties()).filteredOn((property) -> !property.hasNonNull("defaultValue"))
			.extracting((property) -> property.get("name").asString())
			.as("keys without a defaultValue: only those that have none")
			.allMatch(KEYS_WITHOUT_DEFAULT::contains);
		assertThat(defaultValue("llm.defaults.timeout")).isEqualTo("60s");
		assertThat(defaultValue("llm.endpoints.*.priority")).isEqualTo("0");
		assertThat(defaultValue("llm.gateway.budget.max-cost-per-day")).isEqualTo("0");
	}

	@Test
	void everyPerEndpointKeyHasMetadataOfItsOwn() {
		List<String> bound = UnknownKeys.keysOf(EndpointProperties.class, "llm.endpoints.*")
			.stream()
			.map((key) -> key.endsWith(".*") ? key.substring(0, key.length() - 2) : key)
			.toList();
		List<String> described = llmProperties().stream()
			.map((property) -> property.get("name").asString())
			.filter((name) -> name.startsWith("llm.endpoints.*."))
			.toList();
		assertThat(described).as("add an entry to META-INF/additional-spring-configuration-metadata.json for each key "
				+ "EndpointProperties binds").containsExactlyInAnyOrderElementsOf(bound);
		for (String key : described) {
			String suffix = key.substring("llm.endpoints.*.".length());
			JsonNode defaults = property("llm.defaults." + suffix);
			if (defaults != null) {
				assertThat(property(key).get("description").asString()).as(key)
					.startsWith(defaults.get("description").asString());
				assertThat(property(key).get("defaultValue")).as(key).isEqualTo(defaults.get("defaultValue"));
			}
		}
	}

	@Test
	void metadataDefaultsOfEveryEndpointKeyAreTheDefaultsApplied() {
		List<String> setToDefaults = new ArrayList<>();
		for (JsonNode property : llmProperties()) {
			String name = property.get("name").asString();
			if ((name.startsWith("llm.defaults.") || name.startsWith("llm.endpoints.*.")) && property.hasNonNull("defaultValue")) {
				setToDefaults.add(name.replace("llm.endpoints.*.", "llm.endpoints.main.") + "="
						+ property.get("defaultValue").asString());
			}
		}
		assertThat(setToDefaults).hasSizeGreaterThan(40);
		this.contextRunner.run((builtIn) -> this.contextRunner.withPropertyValues(setToDefaults.toArray(String[]::new))
			.run((setToDefault) -> assertThat(settings(setToDefault)).isEqualTo(settings(builtIn))));
	}

	@Test
	void hintsListTheProtocolAndTheDefaultRoute() {
		JsonNode hints = metadata().get("hints");
		List<String> names = new ArrayList<>();
		hints.forEach((hint) -> names.add(hint.get("name").asString()));
		assertThat(names).contains("llm.endpoints.*.protocol", "llm.routes.keys");
	}

	private static String defaultValue(String name) {
		return property(name).get("defaultValue").asString();
	}

	private static @Nullable JsonNode property(String name) {
		return llmProperties().stream().filter((property) -> property.get("name").asString().equals(name)).findFirst()
			.orElse(null);
	}

	private static EndpointSettings settings(ApplicationContext context) {
		return context.getBean(EndpointRegistry.class).endpoint("main").settings();
	}

	private static JsonNode metadata() {
		Path classes = Path.of(LlmProperties.class.getProtectionDomain().getCodeSource().getLocation().getPath());
		return JsonMapper.builder().build().readTree(classes.resolve("META-INF/spring-configuration-metadata.json").toFile());
	}

	private static List<JsonNode> llmProperties() {
		List<JsonNode> properties = new ArrayList<>();
		metadata().get("properties").forEach((property) -> {
			if (property.get("name").asString().startsWith("llm.")) {
				properties.add(property);
			}
		});
		return properties;
	}

}
