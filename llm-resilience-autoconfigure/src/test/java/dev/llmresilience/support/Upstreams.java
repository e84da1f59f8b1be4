package dev.llmresilience.support;

import java.io.IOException;

import dev.llmresilience.autoconfigure.LlmAutoConfiguration;
import dev.llmresilience.autoconfigure.LlmMetricsAutoConfiguration;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Two real local OpenAI-compatible servers, {@code primary} and {@code backup}, for tests.
 */
public final class Upstreams implements AutoCloseable {

	public static final String KEY = "sk-operate-test-SECRET-4242";

	public final MockWebServer primary = new MockWebServer();

	public final MockWebServer backup = new MockWebServer();

	public Upstreams() throws IOException {
		this.primary.start();
		this.backup.start();
	}

	public String[] properties(String... more) {
		String[] base = { "llm.endpoints.primary.base-url=" + this.primary.url("/v1"),
				"llm.endpoints.primary.model=gpt-test", "llm.endpoints.primary.api-key=" + KEY,
				"llm.endpoints.primary.price.input-per-million=2.0",
				"llm.endpoints.primary.price.output-per-million=8.0",
				"llm.endpoints.backup.base-url=" + this.backup.url("/v1"), "llm.endpoints.backup.model=small-test",
				"llm.endpoints.backup.priority=1", "llm.endpoints.backup.price.input-per-million=1.0",
				"llm.endpoints.backup.price.output-per-million=4.0", "llm.defaults.retry.initial-backoff=1ms",
				"llm.defaults.retry.max-backoff=2ms" };
		String[] all = new String[base.length + more.length];
		System.arraycopy(base, 0, all, 0, base.length);
		System.arraycopy(more, 0, all, base.length, more.length);
		return all;
	}

	/**
	 * A context with Boot's metrics (a simple registry), the starter and its meters, pointed at these
	 * servers.
	 * @return the runner
	 */
	public ApplicationContextRunner withMeters() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
					LlmAutoConfiguration.class, LlmMetricsAutoConfiguration.class))
			.withPropertyValues(properties());
	}

	public static MockResponse completion(String model, String content, int promptTokens, int completionTokens) {
		return new MockResponse.Builder().code(200)
			.setHeader("Content-Type", "application/json")
			.body("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":\"" + model
					+ "\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" + content
					+ "\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":" + promptTokens
					+ ",\"completion_tokens\":" + completionTokens + ",\"total_tokens\":"
					+ (promptTokens + completionTokens) + "}}")
			.build();
	}

	/**
	 * An error status whose message repeats the key it was sent, as a careless provider or proxy
	 * might: what a test then finds of the key came through the starter.
	 * @param code the status
	 * @return the response
	 */
	public static MockResponse status(int code) {
		return new MockResponse.Builder().code(code)
			.setHeader("Content-Type", "application/json")
			.body("{\"error\":{\"message\":\"upstream says " + code + " to Authorization: Bearer " + KEY
					+ " (key " + KEY + ")\",\"type\":\"server_error\",\"code\":null}}")
			.build();
	}

	@Override
	public void close() {
		this.primary.close();
		this.backup.close();
	}

}
