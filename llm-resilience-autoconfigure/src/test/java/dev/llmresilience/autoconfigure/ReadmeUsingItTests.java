package dev.llmresilience.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.ByteArrayResource;

import static dev.llmresilience.support.Answers.completion;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A new Boot application configured with nothing but the YAML of the README's "Using it" (read from
 * README.md) and the dashboard switched on: its breakers show in {@code /actuator/llmbreakers},
 * in {@code /actuator/prometheus} and on {@code /llm/dashboard}. Only the two base URLs are pointed
 * at local mock servers instead of the real providers.
 */
class ReadmeUsingItTests {

	private static final Path README = Path.of(System.getProperty("readme", "../README.md"));

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void applicationFollowingTheReadmeSeesItsBreakersInTheActuatorPrometheusAndTheDashboard() throws Exception {
		String yaml = firstYamlBlockOf("## Using it");
		assertThat(yaml).contains("llm:", "management:", "prometheus", "llmbreakers");
		this.upstreams.primary().enqueue(completion("Hello from gpt-4o"));
		try (ConfigurableApplicationContext app = new SpringApplicationBuilder(Application.class)
			.initializers((context) -> context.getEnvironment().getPropertySources().addLast(load(yaml)))
			.run("--spring.main.web-application-type=reactive", "--server.port=0",
					"--llm.endpoints.gpt-4o.base-url=" + this.upstreams.primary().url("/v1"),
					"--llm.endpoints.deepseek.base-url=" + this.upstreams.backup().url("/v1"),
					"--llm.dashboard.enabled=true")) {
			assertThat(app.getBean(LlmGateway.class).chat("Hello").block().tier()).isEqualTo(Tier.PRIMARY);
			int port = ((WebServerApplicationContext) app).getWebServer().getPort();
			assertThat(get(port, "/actuator/llmbreakers")).contains("\"gpt-4o\":{", "\"deepseek\":{", "\"state\":\"CLOSED\"");
			assertThat(get(port, "/actuator/prometheus"))
				.contains("resilience4j_circuitbreaker_state{name=\"gpt-4o\",state=\"closed\"} 1.0")
				.contains("llm_gateway_calls_total{llm_outcome=\"answered\",llm_route=\"default\",llm_tier=\"PRIMARY\"} 1.0")
				.contains("llm_gateway_degraded_share{llm_route=\"default\"} 0.0");
			assertThat(get(port, "/actuator/health/llm")).contains("\"status\":\"UP\"", "\"gpt-4o\"");
			assertThat(get(port, "/llm/dashboard")).contains("const SOURCE = \"../actuator/llmbreakers\";");
		}
	}

	@Test
	void usingItInstallsTheStarterWhoseCoordinatesItGivesBeforeAskingForThem() throws IOException {
		String install = firstBlockOf("## Using it", "```bash").strip();
		assertThat(install).as("the first command of Using it").startsWith("./mvnw ").contains(" install");
		Matcher modules = Pattern.compile(" -pl (\\S+) -am( |$)").matcher(install);
		assertThat(modules.find()).as("%s builds and installs named modules and what they need (-pl ... -am)", install)
			.isTrue();
		assertThat(install).as("a clean clone needs Maven to download").doesNotContain(" -o ", "--offline");
		String parent = Files.readString(README.resolveSibling("pom.xml"), StandardCharsets.UTF_8);
		String project = parent.substring(parent.indexOf("</parent>"));
		String groupId = tag(project, "groupId");
		String version = tag(project, "version");
		String dependency = firstBlockOf("## Using it", "```xml");
		String artifactId = tag(dependency, "artifactId");
		assertThat(tag(dependency, "groupId")).isEqualTo(groupId);
		assertThat(tag(dependency, "version")).isEqualTo(version);
		List<String> installed = List.of(modules.group(1).split(","));
		assertThat(installed).as("the modules installed").anySatisfy((module) -> {
			String pom = Files.readString(README.resolveSibling(module).resolve("pom.xml"), StandardCharsets.UTF_8);
			assertThat(tag(pom.substring(pom.indexOf("</parent>")), "artifactId")).isEqualTo(artifactId);
			assertThat(parent).contains("<module>" + module + "</module>");
		});
	}

	private static String tag(String xml, String name) {
		Matcher value = Pattern.compile("<" + name + ">([^<]+)</" + name + ">").matcher(xml);
		assertThat(value.find()).as("<%s> in %s", name, xml).isTrue();
		return value.group(1).trim();
	}

	private static String firstBlockOf(String heading, String fence) throws IOException {
		List<String> lines = Files.readAllLines(README, StandardCharsets.UTF_8);
		int start = lines.indexOf(heading);
		assertThat(start).as("section %s in %s", heading, README).isNotNegative();
		int open = start + 1;
		while (!lines.get(open).equals(fence)) {
			assertThat(lines.get(open)).as("a %s block in %s", fence, heading).doesNotStartWith("## ");
			open++;
		}
		int close = lines.subList(open + 1, lines.size()).indexOf("```") + open + 1;
		return String.join("\n", lines.subList(open + 1, close)) + "\n";
	}

	private static String firstYamlBlockOf(String heading) throws IOException {
		List<String> lines = Files.readAllLines(README, StandardCharsets.UTF_8);
		int start = lines.indexOf(heading);
		assertThat(start).as("section %s in %s", heading, README).isNotNegative();
		int open = start + 1;
		while (!lines.get(open).equals("```yaml")) {
			open++;
		}
		int close = lines.subList(open + 1, lines.size()).indexOf("```") + open + 1;
		return String.join("\n", lines.subList(open + 1, close)) + "\n";
	}

	private static org.springframework.core.env.PropertySource<?> load(String yaml) {
		try {
			return new YamlPropertySourceLoader()
				.load("README Using it", new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)))
				.get(0);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String get(int port, String path) throws Exception {
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).build(),
					HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(path).isEqualTo(200);
		return response.body();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Application {

	}

}
