package dev.llmresilience.redis;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.util.TestSocketUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Data Redis on the class path (as for {@code llm.shared-state.type=redis}) with the shared
 * state {@code local} and no Redis configured: {@code /actuator/health} stays UP, since nothing uses
 * the Redis that Boot's indicator would check. A Redis the application configures, or asks to be
 * checked, is checked as Boot does.
 */
class RedisHealthDefaultsTests {

	private static final String[] APPLICATION = { "--spring.main.web-application-type=reactive", "--server.port=0",
			"--management.endpoints.web.exposure.include=health", "--management.endpoint.health.show-details=always",
			"--llm.endpoints.main.base-url=http://127.0.0.1:9/v1", "--llm.endpoints.main.model=m",
			"--llm.endpoints.main.api-key=sk-health-test-key" };

	@Test
	void unusedRedisOnTheClassPathDoesNotTakeTheApplicationDown() throws Exception {
		try (ConfigurableApplicationContext app = run()) {
			assertThat(app.containsBean("redisHealthContributor")).isFalse();
			HttpResponse<String> health = get(app, "/actuator/health");
			assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
			JsonNode body = JsonMapper.builder().build().readTree(health.body());
			assertThat(body.get("status").asString()).isEqualTo("UP");
			assertThat(body.get("components").has("redis")).isFalse();
		}
	}

	@Test
	void aRedisTheApplicationConfiguresIsCheckedAsBootChecksIt() throws Exception {
		int closed = TestSocketUtils.findAvailableTcpPort();
		try (ConfigurableApplicationContext app = run("--spring.data.redis.port=" + closed)) {
			assertThat(app.containsBean("redisHealthContributor")).isTrue();
			assertThat(get(app, "/actuator/health").statusCode()).isEqualTo(503);
		}
	}

	@Test
	void redisHealthAskedForIsKept() {
		try (ConfigurableApplicationContext app = run("--management.health.redis.enabled=true")) {
			assertThat(app.containsBean("redisHealthContributor")).isTrue();
		}
	}

	private static ConfigurableApplicationContext run(String... more) {
		String[] args = new String[APPLICATION.length + more.length];
		System.arraycopy(APPLICATION, 0, args, 0, APPLICATION.length);
		System.arraycopy(more, 0, args, APPLICATION.length, more.length);
		return new SpringApplicationBuilder(Application.class).run(args);
	}

	private static HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
		int port = ((WebServerApplicationContext) app).getWebServer().getPort();
		return HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).build(),
					HttpResponse.BodyHandlers.ofString());
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Application {

	}

}
