package dev.llmresilience.springai;

import java.util.Map;

import dev.llmresilience.autoconfigure.SpringAiProperties;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.ClassUtils;

/**
 * Switches off the retries of Spring AI models that serve endpoints: when an endpoint has
 * {@code protocol: spring-ai}, {@code spring.ai.retry.max-attempts} (Spring AI's RetryTemplate,
 * which counts retries) and {@code spring.ai.openai.max-retries} (the OpenAI SDK's own) default to
 * 0, below every property source of the application, so that a value it sets still wins. The
 * endpoint's retry, inside its circuit breaker, is then the one place that decides.
 */
final class SpringAiRetryDefaults implements EnvironmentPostProcessor, Ordered {

	/** The name of the property source holding the defaults. */
	public static final String SOURCE = "llmSpringAiRetriesOff";

	/** The keys set to 0. */
	static final Map<String, Object> RETRIES_OFF = Map.of("spring.ai.retry.max-attempts", 0, "spring.ai.openai.max-retries", 0);

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!ClassUtils.isPresent("org.springframework.ai.chat.model.ChatModel", getClass().getClassLoader())) {
			return;
		}
		Binder binder = Binder.get(environment);
		if (!binder.bind("llm.spring-ai.disable-model-retries", Boolean.class).orElse(true)
				|| !hasSpringAiEndpoint(binder) || environment.getPropertySources().contains(SOURCE)) {
			return;
		}
		environment.getPropertySources().addLast(new MapPropertySource(SOURCE, RETRIES_OFF));
	}

	static boolean hasSpringAiEndpoint(Binder binder) {
		return binder.bind("llm.endpoints", Bindable.mapOf(String.class, Protocol.class))
			.orElse(Map.of())
			.values()
			.stream()
			.anyMatch((endpoint) -> SpringAiProperties.PROTOCOL.equals(endpoint.getProtocol()));
	}

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

	/** Only an endpoint's protocol, so that no other value of it can fail the binding this early. */
	public static class Protocol {

		private String protocol = "openai";

		public String getProtocol() {
			return this.protocol;
		}

		public void setProtocol(String protocol) {
			this.protocol = protocol;
		}

	}

}
