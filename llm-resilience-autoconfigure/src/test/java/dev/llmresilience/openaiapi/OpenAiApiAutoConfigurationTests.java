package dev.llmresilience.openaiapi;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.engine.LlmAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.servlet.handler.SimpleUrlHandlerMapping;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code llm.openai-api}: off by default; when on, routes in a WebFlux application and a handler
 * mapping in a Servlet one; start-up fails without client keys, with a base path that is not a
 * plain path or a body limit under 1KB, naming the property and never showing a key.
 */
class OpenAiApiAutoConfigurationTests {

	private static final String CLIENT_KEY = "client-key-secret-31337";

	private static final String[] ENDPOINT = { "llm.endpoints.main.base-url=http://localhost:9/v1",
			"llm.endpoints.main.model=m" };

	private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class, OpenAiApiAutoConfiguration.class))
		.withPropertyValues(ENDPOINT);

	private final WebApplicationContextRunner servlet = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class, OpenAiApiAutoConfiguration.class))
		.withPropertyValues(ENDPOINT);

	@Test
	void isOffByDefault() {
		this.reactive.run((context) -> assertThat(context).hasNotFailed()
			.doesNotHaveBean(OpenAiApiHandler.class)
			.doesNotHaveBean("llmOpenAiApiRoutes"));
	}

	@Test
	void servesFunctionalRoutesInAWebFluxApplication() {
		this.reactive.withPropertyValues("llm.openai-api.enabled=true", "llm.openai-api.api-keys=" + CLIENT_KEY)
			.run((context) -> {
				assertThat(context).hasSingleBean(OpenAiApiHandler.class).hasBean("llmOpenAiApiRoutes");
				assertThat(context.getBean("llmOpenAiApiRoutes")).isInstanceOf(RouterFunction.class);
				assertThat(context).doesNotHaveBean(SimpleUrlHandlerMapping.class);
			});
	}

	@Test
	void servesAHandlerMappingInAServletApplication() {
		this.servlet.withPropertyValues("llm.openai-api.enabled=true", "llm.openai-api.api-keys=" + CLIENT_KEY,
				"llm.openai-api.base-path=/llm/v1/")
			.run((context) -> {
				SimpleUrlHandlerMapping mapping = context.getBean("llmOpenAiApiHandlerMapping", SimpleUrlHandlerMapping.class);
				assertThat(mapping.getUrlMap()).containsOnlyKeys("/llm/v1/chat/completions", "/llm/v1/responses", "/llm/v1/models",
						"/llm/v1/**");
				assertThat(context).doesNotHaveBean("llmOpenAiApiRoutes");
			});
	}

	@Test
	void enabledWithoutClientKeysFailsNamingTheProperty() {
		this.reactive.withPropertyValues("llm.openai-api.enabled=true").run((context) -> {
			LlmConfigurationException failure = failure(context.getStartupFailure());
			assertThat(failure.getProperty()).isEqualTo("llm.openai-api.api-keys");
			assertThat(failure.getMessage()).contains("is empty while llm.openai-api.enabled=true")
				.contains("Authorization: Bearer <key>");
		});
	}

	@Test
	void aBlankClientKeyFailsWithoutShowingTheOthers() {
		this.reactive.withPropertyValues("llm.openai-api.enabled=true", "llm.openai-api.api-keys=" + CLIENT_KEY + ", ")
			.run((context) -> {
				LlmConfigurationException failure = failure(context.getStartupFailure());
				assertThat(failure.getProperty()).isEqualTo("llm.openai-api.api-keys");
				assertThat(failure.getMessage()).contains("has a blank key").doesNotContain(CLIENT_KEY);
			});
	}

	@Test
	void aClientKeyLeftAsAPlaceholderOfAnUnsetVariableFailsNamingTheVariable() {
		this.reactive
			.withPropertyValues("llm.openai-api.enabled=true",
					"llm.openai-api.api-keys=" + CLIENT_KEY + ",${LLM_TEST_NEVER_SET_CLIENT_KEY}")
			.run((context) -> {
				LlmConfigurationException failure = failure(context.getStartupFailure());
				assertThat(failure.getProperty()).isEqualTo("llm.openai-api.api-keys");
				assertThat(failure.getMessage())
					.contains("is the placeholder ${LLM_TEST_NEVER_SET_CLIENT_KEY}, which nothing resolved")
					.contains("export LLM_TEST_NEVER_SET_CLIENT_KEY=")
					.doesNotContain(CLIENT_KEY);
			});
	}

	@Test
	void aBasePathThatIsNotAPlainPathFails() {
		this.reactive.withPropertyValues("llm.openai-api.enabled=true", "llm.openai-api.api-keys=" + CLIENT_KEY,
				"llm.openai-api.base-path=v1/*")
			.run((context) -> {
				LlmConfigurationException failure = failure(context.getStartupFailure());
				assertThat(failure.getProperty()).isEqualTo("llm.openai-api.base-path");
				assertThat(failure.getMessage()).contains("Use a path such as /v1");
			});
	}

	@Test
	void aBodyLimitUnder1KbFails() {
		this.reactive.withPropertyValues("llm.openai-api.enabled=true", "llm.openai-api.api-keys=" + CLIENT_KEY,
				"llm.openai-api.max-request-size=100B")
			.run((context) -> {
				LlmConfigurationException failure = failure(context.getStartupFailure());
				assertThat(failure.getProperty()).isEqualTo("llm.openai-api.max-request-size");
				assertThat(failure.getMessage()).contains("outside 1KB to 2GB");
			});
	}

	@Test
	void noBodyReadsAtOnceFails() {
		this.reactive.withPropertyValues("llm.openai-api.enabled=true", "llm.openai-api.api-keys=" + CLIENT_KEY,
				"llm.openai-api.max-concurrent-body-reads=0")
			.run((context) -> {
				LlmConfigurationException failure = failure(context.getStartupFailure());
				assertThat(failure.getProperty()).isEqualTo("llm.openai-api.max-concurrent-body-reads");
				assertThat(failure.getMessage()).contains("at least 1");
			});
	}

	private static LlmConfigurationException failure(Throwable startup) {
		assertThat(startup).isNotNull();
		Throwable cause = startup;
		while (!(cause instanceof LlmConfigurationException) && cause.getCause() != null) {
			cause = cause.getCause();
		}
		assertThat(cause).isInstanceOf(LlmConfigurationException.class);
		return (LlmConfigurationException) cause;
	}

}
