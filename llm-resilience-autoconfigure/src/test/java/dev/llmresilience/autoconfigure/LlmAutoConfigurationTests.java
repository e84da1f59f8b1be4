package dev.llmresilience.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmAutoConfiguration;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.LlmClient;
import dev.llmresilience.protocol.LlmClientFactory;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link LlmAutoConfiguration}: which beans it defines, when it backs off, and that it
 * builds its HTTP clients from the application's {@link WebClient.Builder}.
 */
class LlmAutoConfigurationTests {

	private static final String ANSWER = "{\"model\":\"m\",\"choices\":[{\"message\":{\"role\":\"assistant\","
			+ "\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class));

	private final MockWebServer server = new MockWebServer();

	private final MockWebServer backup = new MockWebServer();

	@BeforeEach
	void startServers() throws Exception {
		this.server.start();
		this.backup.start();
	}

	@AfterEach
	void stopServers() {
		this.server.close();
		this.backup.close();
	}

	@Test
	void twoEndpointsGiveOneGatewayOneRegistryAndOneClassifier() {
		this.contextRunner.withPropertyValues(twoEndpoints()).run((context) -> {
			assertThat(context).hasSingleBean(LlmGateway.class)
				.hasSingleBean(EndpointRegistry.class)
				.hasSingleBean(FailureClassifier.class)
				.hasSingleBean(LlmProperties.class);
			EndpointRegistry registry = context.getBean(EndpointRegistry.class);
			assertThat(registry.endpoints()).extracting((endpoint) -> endpoint.name()).containsExactly("primary", "backup");
			assertThat(registry.routeNames()).containsExactly(Map.entry("default", List.of("primary", "backup")));
		});
	}

	@Test
	void userDefinedFailureClassifierIsUsedInsteadOfTheStartersOne() {
		this.contextRunner.withPropertyValues(twoEndpoints())
			.withUserConfiguration(UserClassifierConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(FailureClassifier.class).hasSingleBean(LlmGateway.class);
				assertThat(context.getBean(FailureClassifier.class))
					.isSameAs(context.getBean(UserClassifierConfiguration.class).classifier);
			});
	}

	@Test
	void userDefinedEndpointRegistryBacksOffAndItsEndpointsNeedNoConfiguration() {
		this.contextRunner.withUserConfiguration(UserRegistryConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(EndpointRegistry.class).hasSingleBean(LlmGateway.class);
			assertThat(context.getBean(EndpointRegistry.class)).isSameAs(context.getBean("userRegistry"));
		});
	}

	@Test
	void userDefinedGatewayBacksOff() {
		this.contextRunner.withPropertyValues(twoEndpoints())
			.withUserConfiguration(UserGatewayConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(LlmGateway.class).hasSingleBean(EndpointRegistry.class);
				assertThat(context.getBean(LlmGateway.class)).isInstanceOf(UserGateway.class);
			});
	}

	@Test
	void disabledStarterDefinesNoneOfItsBeans() {
		this.contextRunner.withPropertyValues(twoEndpoints()).withPropertyValues("llm.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(LlmGateway.class)
				.doesNotHaveBean(EndpointRegistry.class)
				.doesNotHaveBean(FailureClassifier.class)
				.doesNotHaveBean(LlmProperties.class);
		});
	}

	@Test
	void disabledStarterStartsWithoutAnyEndpoint() {
		this.contextRunner.withPropertyValues("llm.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(LlmGateway.class).doesNotHaveBean(EndpointRegistry.class);
		});
	}

	@Test
	void withoutWebClientOnTheClasspathDefinesNoneOfItsBeans() {
		this.contextRunner.withPropertyValues(twoEndpoints())
			.withClassLoader(new FilteredClassLoader(WebClient.class))
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean(LlmGateway.class)
					.doesNotHaveBean(EndpointRegistry.class)
					.doesNotHaveBean(FailureClassifier.class);
			});
	}

	@Test
	void webClientCustomizersOfTheApplicationApplyToEveryEndpoint() {
		this.server.enqueue(answer());
		this.backup.enqueue(answer());
		this.contextRunner.withConfiguration(AutoConfigurations.of(WebClientAutoConfiguration.class))
			.withUserConfiguration(CustomizerConfiguration.class)
			.withPropertyValues("llm.endpoints.primary.base-url=" + this.server.url("/v1"), "llm.endpoints.primary.model=m1",
					"llm.endpoints.backup.base-url=" + this.backup.url("/v1"), "llm.endpoints.backup.model=m2",
					"llm.endpoints.backup.priority=1", "llm.routes.backup-only=backup")
			.run((context) -> {
				LlmGateway gateway = context.getBean(LlmGateway.class);
				assertThat(gateway.chat("hello").block(Duration.ofSeconds(10)).endpoint()).isEqualTo("primary");
				assertThat(gateway.chat(ChatRequest.builder().user("hello").route("backup-only").build())
					.block(Duration.ofSeconds(10))
					.endpoint()).isEqualTo("backup");
				assertThat(this.server.takeRequest().getHeaders().get("X-Customized")).isEqualTo("by-the-application");
				assertThat(this.backup.takeRequest().getHeaders().get("X-Customized")).isEqualTo("by-the-application");
			});
	}

	@Test
	void userDefinedWebClientBuilderIsUsedWithItsFiltersAndTheEndpointsOwnHeaders() {
		this.server.enqueue(answer());
		this.contextRunner.withUserConfiguration(UserWebClientBuilderConfiguration.class)
			.withPropertyValues("llm.endpoints.primary.base-url=" + this.server.url("/v1"),
					"llm.endpoints.primary.model=m1", "llm.endpoints.primary.api-key=sk-user-builder-key",
					"llm.endpoints.primary.headers.OpenAI-Organization=org-42")
			.run((context) -> {
				assertThat(context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(10)).content())
					.isEqualTo("hi");
				RecordedRequest request = this.server.takeRequest();
				assertThat(request.getHeaders().get("X-Filtered")).isEqualTo("by-a-filter");
				assertThat(request.getHeaders().get("Authorization")).isEqualTo("Bearer sk-user-builder-key");
				assertThat(request.getHeaders().get("OpenAI-Organization")).isEqualTo("org-42");
				assertThat(request.getUrl().encodedPath()).isEqualTo("/v1/chat/completions");
			});
	}

	@Test
	void endpointsApiKeyDoesNotLeakIntoTheApplicationsOwnBuilder() {
		this.contextRunner.withUserConfiguration(UserWebClientBuilderConfiguration.class)
			.withPropertyValues("llm.endpoints.primary.base-url=" + this.server.url("/v1"),
					"llm.endpoints.primary.model=m1", "llm.endpoints.primary.api-key=sk-not-for-the-app")
			.run((context) -> {
				WebClient appClient = context.getBean(WebClient.Builder.class).build();
				this.server.enqueue(new MockResponse.Builder().code(200).body("app").build());
				String body = appClient.get()
					.uri(this.server.url("/app").toString())
					.retrieve()
					.bodyToMono(String.class)
					.block(Duration.ofSeconds(10));
				assertThat(body).isEqualTo("app");
				assertThat(this.server.takeRequest().getHeaders().get("Authorization")).isNull();
			});
	}

	@Test
	void clientFactoryBeanAddsAProtocolWhoseClientsAnswerAndAreClosedWithTheContext() {
		CannedClients.closed.set(0);
		this.contextRunner
			.withPropertyValues("llm.endpoints.local.base-url=http://localhost:1/v1", "llm.endpoints.local.model=canned-model",
					"llm.endpoints.local.protocol=canned")
			.withUserConfiguration(CannedProtocolConfiguration.class)
			.run((context) -> {
				ChatResponse answer = context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(5));
				assertThat(answer.content()).isEqualTo("canned answer to hello from canned-model");
				assertThat(answer.endpoint()).isEqualTo("local");
				assertThat(CannedClients.closed).hasValue(0);
			});
		assertThat(CannedClients.closed).hasValue(1);
	}

	private String[] twoEndpoints() {
		return new String[] { "llm.endpoints.primary.base-url=" + this.server.url("/v1"), "llm.endpoints.primary.model=m1",
				"llm.endpoints.backup.base-url=" + this.server.url("/v1"), "llm.endpoints.backup.model=m2",
				"llm.endpoints.backup.priority=1" };
	}

	private static MockResponse answer() {
		return new MockResponse.Builder().code(200).setHeader("Content-Type", "application/json").body(ANSWER).build();
	}

	@Configuration(proxyBeanMethods = false)
	static class CannedProtocolConfiguration {

		@Bean
		LlmClientFactory cannedClients() {
			return new CannedClients();
		}

	}

	static class CannedClients implements LlmClientFactory {

		static final AtomicInteger closed = new AtomicInteger();

		@Override
		public String protocol() {
			return "canned";
		}

		@Override
		public LlmClient create(ClientSettings settings) {
			return new CannedClient(settings.model());
		}

		record CannedClient(String model) implements LlmClient, AutoCloseable {

			@Override
			public Mono<Completion> chat(ChatRequest request) {
				String prompt = request.messages().get(request.messages().size() - 1).content();
				return Mono.just(new Completion("canned answer to " + prompt + " from " + this.model, this.model,
						"stop", List.of(), null));
			}

			@Override
			public void close() {
				closed.incrementAndGet();
			}

		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserClassifierConfiguration {

		final FailureClassifier classifier = new FailureClassifier();

		@Bean
		FailureClassifier userClassifier() {
			return this.classifier;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserRegistryConfiguration {

		@Bean
		EndpointRegistry userRegistry() {
			return new EndpointRegistry(List.of(), Map.of(), List.of());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserGatewayConfiguration {

		@Bean
		UserGateway userGateway() {
			return new UserGateway();
		}

	}

	static class UserGateway implements LlmGateway {

		@Override
		public Mono<ChatResponse> chat(ChatRequest request) {
			return Mono.empty();
		}

		@Override
		public Flux<ChatChunk> stream(ChatRequest request) {
			return Flux.empty();
		}

		@Override
		public Mono<DeferredResult> deferred(String ticket) {
			return Mono.empty();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class CustomizerConfiguration {

		@Bean
		WebClientCustomizer headerCustomizer() {
			return (builder) -> builder.defaultHeader("X-Customized", "by-the-application");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserWebClientBuilderConfiguration {

		@Bean
		WebClient.Builder userWebClientBuilder() {
			return WebClient.builder()
				.filter((request, next) -> next
					.exchange(ClientRequest.from(request).header("X-Filtered", "by-a-filter").build()));
		}

	}

}
