package dev.llmresilience.sample;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.util.TestSocketUtils;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Grafana dashboard of {@code docs/grafana/llm-resilience.json} queries meters that exist: every
 * metric its PromQL names, with every label its selectors filter on, is in the sample's
 * {@code /actuator/prometheus} once calls have answered, fallen back and been deferred.
 */
@SpringBootTest(webEnvironment = WebEnvironment.DEFINED_PORT, properties = "llm.defaults.retry.initial-backoff=1ms")
@AutoConfigureWebTestClient
class GrafanaDashboardTests {

	private static final int PORT = TestSocketUtils.findAvailableTcpPort();

	private static final Path DASHBOARD = Path.of(System.getProperty("grafana.dashboard", "../docs/grafana/llm-resilience.json"));

	private static final Pattern METRIC = Pattern.compile("\\b((?:resilience4j|gen_ai|llm)_[a-z0-9_]+)(\\{[^}]*\\})?");

	private static final Pattern GROUPING = Pattern.compile("\\b(by|without|on|ignoring)\\s*\\([^)]*\\)");

	private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\((\\w+),\\s*(\\w+)\\)");

	private static final Pattern LABEL = Pattern.compile("([a-z_]+)\\s*=~?");

	@DynamicPropertySource
	static void port(DynamicPropertyRegistry registry) {
		registry.add("server.port", () -> PORT);
	}

	@Autowired
	private WebTestClient client;

	@Test
	void everyMetricAndLabelTheDashboardQueriesIsExported() {
		chat(Map.of("prompt", "Hello"));
		mode("primary", "error");
		chat(Map.of("prompt", "Hello"));
		mode("backup", "error");
		chat(Map.of("prompt", "Later", "deferrable", true));
		mode("primary", "ok");
		mode("backup", "ok");
		String scrape = this.client.get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
			.expectBody(String.class).returnResult().getResponseBody();

		JsonNode dashboard = JsonMapper.builder().build().readTree(DASHBOARD.toFile());
		List<String> expressions = new ArrayList<>();
		dashboard.get("panels").forEach((panel) -> panel.get("targets").forEach((target) -> expressions.add(target.get("expr").asString())));
		dashboard.get("templating").get("list").forEach((variable) -> {
			if (variable.has("definition")) {
				// label_values(metric, label): the metric with a selector on the label
				Matcher values = LABEL_VALUES.matcher(variable.get("definition").asString());
				assertThat(values.matches()).as(variable.get("definition").asString()).isTrue();
				expressions.add(values.group(1) + "{" + values.group(2) + "=~\".*\"}");
			}
		});
		assertThat(expressions).hasSizeGreaterThan(10);
		Set<String> checked = new TreeSet<>();
		for (String expression : expressions) {
			// grouping labels are not metric names
			Matcher metric = METRIC.matcher(GROUPING.matcher(expression).replaceAll(""));
			while (metric.find()) {
				String name = metric.group(1);
				List<String> series = scrape.lines().filter((line) -> line.startsWith(name + "{") || line.startsWith(name + " ")).toList();
				assertThat(series).as("series of %s (queried by %s)", name, expression).isNotEmpty();
				if (metric.group(2) != null) {
					Matcher label = LABEL.matcher(metric.group(2));
					while (label.find()) {
						String key = label.group(1) + "=\"";
						assertThat(series).as("%s carries the label %s", name, label.group(1)).anyMatch((line) -> line.contains(key));
					}
				}
				checked.add(name);
			}
		}
		assertThat(checked).contains("resilience4j_circuitbreaker_state", "llm_gateway_degraded_share",
				"gen_ai_client_operation_duration_seconds_count", "llm_gateway_calls_total", "llm_gateway_cost_total");
	}

	private void chat(Map<String, Object> body) {
		this.client.mutate().responseTimeout(Duration.ofSeconds(30)).build()
			.post().uri("/api/chat").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
			.exchange().expectStatus().isOk();
	}

	private void mode(String provider, String mode) {
		this.client.post().uri("/sim/" + provider + "/mode").contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("mode", mode)).exchange().expectStatus().isOk();
	}

}
