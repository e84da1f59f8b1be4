package dev.llmresilience.dashboard;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.LlmAutoConfiguration;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.error;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /llm/dashboard} over real HTTP in a WebFlux and in a Servlet application: off by
 * default, one self-contained page (nothing to load from elsewhere, and a Content-Security-Policy
 * that forbids it), pointed at the actuator endpoint wherever its base path puts it; and the
 * history that endpoint gives the page.
 */
@ExtendWith(OutputCaptureExtension.class)
class DashboardTests {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "REACTIVE", "SERVLET" })
	void servesOneSelfContainedPageThatReadsTheActuatorEndpoint(WebApplicationType type) throws Exception {
		try (ConfigurableApplicationContext app = DashboardApplications.start(type, this.upstreams,
				"--llm.dashboard.enabled=true")) {
			HttpResponse<String> page = get(app, "/llm/dashboard");
			assertThat(page.statusCode()).isEqualTo(200);
			assertThat(page.headers().firstValue("Content-Type")).hasValueSatisfying(
					(contentType) -> assertThat(contentType.replace(" ", "").toLowerCase()).isEqualTo("text/html;charset=utf-8"));
			assertThat(page.headers().firstValue("Content-Security-Policy"))
				.hasValue(app.getBean(DashboardPage.class).contentSecurityPolicy());
			assertThat(page.headers().firstValue("Content-Security-Policy").orElseThrow())
				.doesNotContain("'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", "*")
				.startsWith("default-src 'none'; ")
				.contains("script-src " + hashOf(page.body(), "script") + ";", "style-src " + hashOf(page.body(), "style") + ";",
						"connect-src 'self'", "base-uri 'none'", "frame-ancestors 'self'");
			assertThat(page.body()).contains("const SOURCE = \"../actuator/llmbreakers\";")
				.contains("const REFRESH_MILLIS = 2000;");
			// the one URL in it is SVG's namespace, the name createElementNS makes SVG elements with, fetched by nothing
			assertThat(page.body().replace("\"http://www.w3.org/2000/svg\"", "SVG_NAMESPACE"))
				.doesNotContain("http://", "https://", "<script src", "<link", "@import", "url(");
			assertThat(get(app, "/actuator/llmbreakers").statusCode()).isEqualTo(200);
		}
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "REACTIVE", "SERVLET" })
	void actuatorEndpointGivesThePageEachEndpointsLastFifteenMinutesAndItsOutage(WebApplicationType type)
			throws Exception {
		try (ConfigurableApplicationContext app = DashboardApplications.start(type, this.upstreams,
				"--llm.dashboard.enabled=true", "--llm.endpoints.primary.retry.max-attempts=1",
				"--llm.endpoints.primary.circuit-breaker.sliding-window-size=2",
				"--llm.endpoints.primary.circuit-breaker.wait-duration-in-open-state=1m")) {
			JsonNode before = JSON.readTree(get(app, "/actuator/llmbreakers").body()).path("endpoints").path("primary");
			assertThat(before.path("history").path("outage").isNull()).as("no outage yet: " + before).isTrue();
			LlmGateway gateway = app.getBean(LlmGateway.class);
			for (int i = 0; i < 2; i++) {
				this.upstreams.primary().enqueue(error(500, "server_error"));
				this.upstreams.backup().enqueue(completion("from the backup"));
				assertThat(gateway.chat("hello").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.FALLBACK);
			}
			// past the opening, so that the open state has a millisecond of its own
			Thread.sleep(20);
			JsonNode history = JSON.readTree(get(app, "/actuator/llmbreakers").body())
				.path("endpoints")
				.path("primary")
				.path("history");
			assertThat(history.path("bucketSeconds").asInt()).isEqualTo(10);
			Instant start = Instant.parse(history.path("start").asString());
			Instant now = Instant.parse(history.path("now").asString());
			assertThat(Duration.between(start, now)).isBetween(Duration.ofSeconds(890), Duration.ofSeconds(900));
			assertThat(history.path("states").path("CLOSED").size()).isEqualTo(90);
			assertThat(history.path("states").path("OPEN").get(89).asLong()).isPositive();
			assertThat(history.path("answers").path("FALLBACK").get(89).asLong()
					+ history.path("answers").path("FALLBACK").get(88).asLong())
				.as("both calls in the last bucket or two").isEqualTo(2);
			assertThat(history.path("answers").has("PRIMARY")).isFalse();
			JsonNode outage = history.path("outage");
			assertThat(outage.path("began").path("from").asString()).isEqualTo("CLOSED");
			assertThat(outage.path("began").path("to").asString()).isEqualTo("OPEN");
			assertThat(outage.path("began").path("failureRate").asDouble()).isEqualTo(100.0);
			assertThat(outage.path("began").path("bufferedCalls").asInt()).isEqualTo(2);
			assertThat(outage.path("probes").asInt()).isZero();
			assertThat(outage.path("ended").isNull()).isTrue();
			JsonNode backup = JSON.readTree(get(app, "/actuator/llmbreakers/backup").body()).path("history");
			assertThat(backup.path("states").has("OPEN")).isFalse();
			assertThat(backup.path("answers").size()).as("no call tried the backup first").isZero();
		}
	}

	@Test
	void isOffByDefault() throws Exception {
		try (ConfigurableApplicationContext app = DashboardApplications.start(WebApplicationType.REACTIVE, this.upstreams)) {
			assertThat(get(app, "/llm/dashboard").statusCode()).isEqualTo(404);
			assertThat(app.getBeanNamesForType(DashboardPage.class)).isEmpty();
		}
	}

	@Test
	void followsTheActuatorBasePathAndRefreshInterval() throws Exception {
		try (ConfigurableApplicationContext app = DashboardApplications.start(WebApplicationType.REACTIVE, this.upstreams,
				"--llm.dashboard.enabled=true", "--management.endpoints.web.base-path=/manage",
				"--llm.dashboard.refresh=500ms")) {
			assertThat(get(app, "/llm/dashboard").body()).contains("const SOURCE = \"../manage/llmbreakers\";")
				.contains("const REFRESH_MILLIS = 500;");
			assertThat(get(app, "/manage/llmbreakers").statusCode()).isEqualTo(200);
		}
	}

	@Test
	void warnsAtStartUpWhenTheActuatorEndpointIsNotExposed(CapturedOutput output) throws Exception {
		try (ConfigurableApplicationContext app = DashboardApplications.start(WebApplicationType.REACTIVE, this.upstreams,
				"--llm.dashboard.enabled=true", "--management.endpoints.web.exposure.include=health")) {
			assertThat(get(app, "/llm/dashboard").statusCode()).isEqualTo(200);
		}
		assertThat(output.getAll()).contains("llm.dashboard.enabled=true, but the llmbreakers actuator endpoint is not "
				+ "exposed over HTTP, so /llm/dashboard can show no data: add llmbreakers to "
				+ "management.endpoints.web.exposure.include.");
	}

	@Test
	void refreshOutsideItsRangeStopsTheStart() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class, LlmDashboardAutoConfiguration.class))
			.withPropertyValues("llm.endpoints.main.base-url=http://localhost:9/v1", "llm.endpoints.main.model=m",
					"llm.dashboard.enabled=true", "llm.dashboard.refresh=100ms")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOfSatisfying(LlmConfigurationException.class,
						(exception) -> assertThat(exception.getProperty()).isEqualTo("llm.dashboard.refresh")));
	}

	@Test
	void sourceIsRelativeToThePageSoThatItHoldsUnderAContextPath() {
		assertThat(DashboardPage.source("/actuator", "llmbreakers")).isEqualTo("../actuator/llmbreakers");
		assertThat(DashboardPage.source("/", "llmbreakers")).isEqualTo("../llmbreakers");
		assertThat(DashboardPage.source("/ops/", "/breakers")).isEqualTo("../ops/breakers");
		assertThat(new DashboardPage("../x\"</script>", java.time.Duration.ofSeconds(2)).html())
			.contains("const SOURCE = \"../x\\\"\\u003c/script>\";");
	}

	/** The CSP source of the one element's text as served, hashed here as a browser hashes it. */
	private static String hashOf(String html, String element) throws Exception {
		Matcher matcher = Pattern.compile("<" + element + ">(.*?)</" + element + ">", Pattern.DOTALL).matcher(html);
		assertThat(matcher.find()).as("the page's " + element).isTrue();
		byte[] digest = MessageDigest.getInstance("SHA-256").digest(matcher.group(1).getBytes(StandardCharsets.UTF_8));
		assertThat(matcher.find()).as("a second " + element).isFalse();
		return "'sha256-" + Base64.getEncoder().encodeToString(digest) + "'";
	}

	private static HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
		return HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://localhost:" + DashboardApplications.port(app) + path)).build(),
					HttpResponse.BodyHandlers.ofString());
	}

}
