package dev.llmresilience.springai;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Priority;
import dev.llmresilience.engine.LlmAutoConfiguration;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.retry.NonTransientAiException;
import org.springframework.ai.retry.TransientAiException;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.error;
import static dev.llmresilience.support.Answers.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Spring AI's {@code ChatClient} over the gateway's {@code llmGatewayChatModel}, against two local
 * OpenAI-compatible upstreams: call and stream, the metadata of the answer, fallback, the options
 * sent upstream, a tool round trip run by the ChatClient's tool-calling advisor, and the errors
 * as Spring AI's exceptions.
 */
class LlmGatewayChatModelTests {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	private ApplicationContextRunner runner() {
		return this.upstreams.runner()
			.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class, SpringAiAutoConfiguration.class))
			.withPropertyValues("llm.defaults.retry.max-attempts=1");
	}

	@Test
	void chatClientCallAnswersWithTheModelUsageFinishReasonAndHowTheGatewayGotIt() {
		this.upstreams.primary().enqueue(completion("Hello from the gateway"));
		runner().run((context) -> {
			ChatResponse response = ChatClient.create(model(context)).prompt().user("hi").call().chatResponse();
			assertThat(response.getResult().getOutput().getText()).isEqualTo("Hello from the gateway");
			assertThat(response.getResult().getMetadata().getFinishReason()).isEqualTo("stop");
			assertThat(response.getMetadata().getModel()).isEqualTo("served-model");
			assertThat(response.getMetadata().getUsage().getPromptTokens()).isEqualTo(5);
			assertThat(response.getMetadata().getUsage().getCompletionTokens()).isEqualTo(2);
			assertThat(response.getMetadata().<String>get(LlmGatewayChatModel.TIER)).isEqualTo("PRIMARY");
			assertThat(response.getMetadata().<String>get(LlmGatewayChatModel.ENDPOINT)).isEqualTo("primary");
			List<Attempt> attempts = response.getMetadata().get(LlmGatewayChatModel.ATTEMPTS);
			assertThat(attempts).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
			assertThat(response.getMetadata().<Duration>get(LlmGatewayChatModel.LATENCY)).isPositive();
		});
	}

	@Test
	void aFailingPrimaryFallsBackAndTheMetadataSaysSo() {
		this.upstreams.primary().enqueue(error(503, "overloaded"));
		this.upstreams.backup().enqueue(completion("from backup"));
		runner().run((context) -> {
			ChatResponse response = ChatClient.create(model(context)).prompt().user("hi").call().chatResponse();
			assertThat(response.getResult().getOutput().getText()).isEqualTo("from backup");
			assertThat(response.getMetadata().<String>get(LlmGatewayChatModel.TIER)).isEqualTo("FALLBACK");
			assertThat(response.getMetadata().<String>get(LlmGatewayChatModel.ENDPOINT)).isEqualTo("backup");
		});
	}

	@Test
	void chatClientStreamDeliversTheTextAsItComes() {
		this.upstreams.primary().enqueue(Answers.sse(Answers.stream("Hel", "lo", "!")));
		runner().run((context) -> {
			List<String> pieces = ChatClient.create(model(context)).prompt().user("hi").stream().content()
				.collectList().block(Duration.ofSeconds(20));
			assertThat(String.join("", pieces)).isEqualTo("Hello!");
			assertThat(pieces).contains("Hel", "lo", "!");
		});
	}

	@Test
	void streamedChunksNameTheTierAndEndpointAndTheLastOneTheUsage() {
		this.upstreams.primary().enqueue(Answers.sse(Answers.stream("a", "b")));
		runner().run((context) -> {
			List<ChatResponse> chunks = model(context).stream(new org.springframework.ai.chat.prompt.Prompt("hi"))
				.collectList().block(Duration.ofSeconds(20));
			assertThat(chunks).allSatisfy((chunk) -> {
				assertThat(chunk.getMetadata().<String>get(LlmGatewayChatModel.TIER)).isEqualTo("PRIMARY");
				assertThat(chunk.getMetadata().<String>get(LlmGatewayChatModel.ENDPOINT)).isEqualTo("primary");
				assertThat(chunk.getMetadata().getModel()).isEqualTo("primary-model");
			});
			ChatResponse last = chunks.get(chunks.size() - 1);
			assertThat(last.getMetadata().getUsage().getPromptTokens()).isEqualTo(5);
			assertThat(chunks).anySatisfy((chunk) -> assertThat(chunk.getResult().getMetadata().getFinishReason()).isEqualTo("stop"));
		});
	}

	@Test
	void optionsAreSentUpstreamAndTheModelOptionNamesTheRoute() throws Exception {
		this.upstreams.backup().enqueue(completion("cheap answer"));
		runner().withPropertyValues("llm.routes.cheap=backup").run((context) -> {
			String answer = ChatClient.create(model(context))
				.prompt()
				.options(ChatOptions.builder().model("cheap").temperature(0.3).maxTokens(42).topP(0.9).stopSequences(List.of("END")))
				.user("hi")
				.call()
				.content();
			assertThat(answer).isEqualTo("cheap answer");
		});
		JsonNode body = mapper.readTree(this.upstreams.backup().takeRequest().getBody().utf8());
		assertThat(body.get("model").asString()).isEqualTo("backup-model");
		assertThat(body.get("temperature").asDouble()).isEqualTo(0.3);
		assertThat(body.get("max_tokens").asInt()).isEqualTo(42);
		assertThat(body.get("top_p").asDouble()).isEqualTo(0.9);
		assertThat(body.get("stop").get(0).asString()).isEqualTo("END");
		assertThat(this.upstreams.primary().getRequestCount()).isZero();
	}

	@Test
	void chatClientToolsRunInTheAdvisorAndTheirResultGoesBackThroughTheGateway() throws Exception {
		this.upstreams.primary().enqueue(json(200, """
				{"id": "chatcmpl-1", "object": "chat.completion", "model": "served-model",
				 "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
				  "tool_calls": [{"id": "call_1", "type": "function",
				   "function": {"name": "currentWeather", "arguments": "{\\"city\\": \\"Paris\\"}"}}]}}]}
				"""));
		this.upstreams.primary().enqueue(completion("It is sunny in Paris."));
		WeatherTools tools = new WeatherTools();
		runner().run((context) -> {
			String answer = ChatClient.create(model(context)).prompt().user("Weather in Paris?").tools(tools).call().content();
			assertThat(answer).isEqualTo("It is sunny in Paris.");
		});
		assertThat(tools.cities).containsExactly("Paris");
		JsonNode ask = mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8());
		JsonNode function = ask.get("tools").get(0).get("function");
		assertThat(function.get("name").asString()).isEqualTo("currentWeather");
		assertThat(function.get("description").asString()).isEqualTo("The current weather in a city");
		assertThat(function.get("parameters").get("properties").has("city")).isTrue();
		JsonNode messages = mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8()).get("messages");
		assertThat(messages).hasSize(3);
		assertThat(messages.get(1).get("role").asString()).isEqualTo("assistant");
		assertThat(messages.get(1).get("tool_calls").get(0).get("id").asString()).isEqualTo("call_1");
		assertThat(messages.get(2).get("role").asString()).isEqualTo("tool");
		assertThat(messages.get(2).get("tool_call_id").asString()).isEqualTo("call_1");
		assertThat(messages.get(2).get("content").asString()).contains("sunny, 21 C in Paris");
	}

	@Test
	void streamedToolCallsAreHandedOverWholeAndRunByTheAdvisor() {
		this.upstreams.primary().enqueue(Answers.sse(Answers.role()
				+ toolCallEvent("{\"index\":0,\"id\":\"call_7\",\"type\":\"function\",\"function\":{\"name\":\"currentWeather\",\"arguments\":\"\"}}")
				+ toolCallEvent("{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\": \"}}")
				+ toolCallEvent("{\"index\":0,\"function\":{\"arguments\":\"\\\"Oslo\\\"}\"}}")
				+ Answers.finish("tool_calls") + Answers.DONE));
		this.upstreams.primary().enqueue(Answers.sse(Answers.stream("Snow ", "in Oslo.")));
		WeatherTools tools = new WeatherTools();
		runner().run((context) -> {
			List<String> pieces = ChatClient.create(model(context)).prompt().user("Oslo?").tools(tools).stream().content()
				.collectList().block(Duration.ofSeconds(20));
			assertThat(String.join("", pieces)).isEqualTo("Snow in Oslo.");
		});
		assertThat(tools.cities).containsExactly("Oslo");
	}

	@Test
	void aCallersErrorIsNonTransientAndNothingAnsweringIsTransient() {
		this.upstreams.primary().enqueue(error(400, "invalid_request_error"));
		runner().run((context) -> assertThat(catchThrowable(() -> ChatClient.create(model(context)).prompt().user("hi").call().content()))
			.isInstanceOf(NonTransientAiException.class));
		runner().withPropertyValues("llm.spring-ai.chat-model.busy-as-error=true").run((context) -> {
			context.getBean(dev.llmresilience.engine.EndpointRegistry.class).endpoints()
				.forEach((endpoint) -> endpoint.circuitBreaker().transitionToForcedOpenState());
			assertThat(catchThrowable(() -> ChatClient.create(model(context)).prompt().user("hi").call().content()))
				.isInstanceOf(TransientAiException.class)
				.hasMessage("The service is busy right now. Please try again in a minute.");
			assertThat(catchThrowable(() -> ChatClient.create(model(context)).prompt().user("hi").stream().content()
				.blockLast(Duration.ofSeconds(20)))).isInstanceOf(TransientAiException.class);
		});
	}

	@Test
	void byDefaultBusyIsAnAnswerWhoseMetadataSaysBusy() {
		runner().run((context) -> {
			context.getBean(dev.llmresilience.engine.EndpointRegistry.class).endpoints()
				.forEach((endpoint) -> endpoint.circuitBreaker().transitionToForcedOpenState());
			ChatResponse response = ChatClient.create(model(context)).prompt().user("hi").call().chatResponse();
			assertThat(response.getResult().getOutput().getText()).isEqualTo("The service is busy right now. Please try again in a minute.");
			assertThat(response.getMetadata().<String>get(LlmGatewayChatModel.TIER)).isEqualTo("BUSY");
			assertThat(response.getMetadata().containsKey(LlmGatewayChatModel.ENDPOINT)).isFalse();
		});
	}

	@Test
	void isThePrimaryChatModelUnlessToldOtherwiseAndOnlyWithSpringAi() {
		runner().withBean("other", ChatModel.class, () -> (prompt) -> null).run((context) -> {
			assertThat(context.getBean(ChatModel.class)).isInstanceOf(LlmGatewayChatModel.class);
			assertThat(context.getBean("llmGatewayChatModel")).isSameAs(context.getBean(ChatModel.class));
		});
		runner().withPropertyValues("llm.spring-ai.chat-model.primary=false").run((context) ->
				assertThat(context.getBeansOfType(ChatModel.class)).containsKey("llmGatewayChatModel"));
		runner().withPropertyValues("llm.spring-ai.chat-model.enabled=false").run((context) ->
				assertThat(context).doesNotHaveBean(LlmGatewayChatModel.class));
		runner().withClassLoader(new FilteredClassLoader(ChatModel.class)).run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean("llmGatewayChatModel").doesNotHaveBean("llmSpringAiClientFactory");
		});
	}

	@Test
	void aBatchPriorityInTheGatewaysOptionsYieldsThePrimaryToInteractiveCalls() throws Exception {
		this.upstreams.backup().enqueue(completion("batch answer"));
		this.upstreams.primary().enqueue(completion("interactive answer"));
		// half of one call in flight is none: no batch call goes to the primary
		runner().withPropertyValues("llm.endpoints.primary.bulkhead.max-concurrent-calls=1").run((context) -> {
			ChatClient client = ChatClient.create(model(context));
			ChatResponse batch = client.prompt()
				.options(LlmGatewayChatOptions.builder().priority(Priority.BATCH).temperature(0.3))
				.user("summarise the archive")
				.call()
				.chatResponse();
			assertThat(batch.getResult().getOutput().getText()).isEqualTo("batch answer");
			List<Attempt> attempts = batch.getMetadata().get(LlmGatewayChatModel.ATTEMPTS);
			assertThat(attempts).extracting(Attempt::endpoint, Attempt::outcome)
				.containsExactly(tuple("primary", Outcome.CAPACITY_EXHAUSTED), tuple("backup", Outcome.SUCCESS));
			assertThat(client.prompt().options(LlmGatewayChatOptions.builder().temperature(0.3)).user("hi").call().content())
				.isEqualTo("interactive answer");
		});
		JsonNode body = mapper.readTree(this.upstreams.backup().takeRequest().getBody().utf8());
		assertThat(body.get("temperature").asDouble()).as("the other options are kept").isEqualTo(0.3);
		assertThat(this.upstreams.primary().getRequestCount()).isOne();
	}

	@Test
	void theGatewaysOptionsKeepTheirPriorityThroughACopyAndACombination() {
		LlmGatewayChatOptions batch = LlmGatewayChatOptions.builder().priority(Priority.BATCH).model("cheap").build();
		assertThat(((LlmGatewayChatOptions) batch.mutate().build()).getPriority()).isEqualTo(Priority.BATCH);
		assertThat(batch.mutate().build()).isEqualTo(batch);
		LlmGatewayChatOptions combined = LlmGatewayChatOptions.builder()
			.temperature(0.1)
			.combineWith(batch.mutate())
			.build();
		assertThat(combined.getPriority()).isEqualTo(Priority.BATCH);
		assertThat(combined.getModel()).isEqualTo("cheap");
		assertThat(combined.getTemperature()).isEqualTo(0.1);
		assertThat(LlmGatewayChatOptions.builder().build().getPriority()).isNull();
	}

	private static ChatModel model(ApplicationContext context) {
		return context.getBean("llmGatewayChatModel", ChatModel.class);
	}

	private static String toolCallEvent(String call) {
		return "data: {\"id\":\"chatcmpl-t\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
				+ call + "]},\"finish_reason\":null}]}\n\n";
	}

	static final class WeatherTools {

		final List<String> cities = new CopyOnWriteArrayList<>();

		@Tool(description = "The current weather in a city")
		String currentWeather(@ToolParam(description = "the city") String city) {
			this.cities.add(city);
			return "sunny, 21 C in " + city;
		}

	}

}
