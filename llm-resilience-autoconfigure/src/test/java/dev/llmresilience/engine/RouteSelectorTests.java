package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.RouteSelector;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The route-selection hook: a {@link RouteSelector} bean picks the route of a
 * request that names none. Which server received the request tells which route was taken.
 */
class RouteSelectorTests {

	/** The selector of docs/degradation.md: prompts under 500 characters go to the cheap route. */
	static final class ShortPromptsToCheap implements RouteSelector {

		private final AtomicInteger calls = new AtomicInteger();

		@Override
		public String select(ChatRequest request) {
			this.calls.incrementAndGet();
			int length = request.messages().stream().map(ChatMessage::content).mapToInt(String::length).sum();
			return (length < 500) ? "cheap" : "default";
		}

	}

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
			.withPropertyValues("llm.routes.default=primary,backup", "llm.routes.cheap=backup");
	}

	@Test
	void defaultSelectorPicksTheDefaultRoute() {
		this.upstreams.primary().enqueue(completion("from primary"));
		runner().run((context) -> {
			assertThat(context.getBean(RouteSelector.class)).isSameAs(RouteSelector.DEFAULT);
			ChatResponse response = chat(context, ChatRequest.ofUser("short"));
			assertThat(response.endpoint()).isEqualTo("primary");
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
		});
	}

	@Test
	void selectorBeanReplacesTheDefault() {
		runner().withBean(RouteSelector.class, ShortPromptsToCheap::new)
			.run((context) -> assertThat(context).hasSingleBean(RouteSelector.class)
				.getBean(RouteSelector.class)
				.isInstanceOf(ShortPromptsToCheap.class));
	}

	@Test
	void shortPromptsGoToTheCheapRouteAndLongOnesToTheDefault() {
		this.upstreams.backup().enqueue(completion("cheap answer"));
		this.upstreams.primary().enqueue(completion("big answer"));
		runner().withBean(RouteSelector.class, ShortPromptsToCheap::new).run((context) -> {
			ChatResponse cheap = chat(context, ChatRequest.ofUser("x".repeat(499)));
			assertThat(cheap.endpoint()).isEqualTo("backup");
			assertThat(cheap.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(cheap.content()).isEqualTo("cheap answer");
			assertThat(this.upstreams.primary().getRequestCount()).isZero();

			ChatResponse big = chat(context, ChatRequest.ofUser("x".repeat(500)));
			assertThat(big.endpoint()).isEqualTo("primary");
			assertThat(big.content()).isEqualTo("big answer");
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(this.upstreams.backup().getRequestCount()).isOne();
		});
	}

	@Test
	void requestThatNamesItsRouteBypassesTheSelector() {
		this.upstreams.primary().enqueue(completion("from primary"));
		runner().withBean(RouteSelector.class, ShortPromptsToCheap::new).run((context) -> {
			ChatResponse response = chat(context, ChatRequest.builder().user("short").route("default").build());
			assertThat(response.endpoint()).isEqualTo("primary");
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
			assertThat(((ShortPromptsToCheap) context.getBean(RouteSelector.class)).calls).hasValue(0);
		});
	}

	@Test
	void aMisspeltRouteIsRefusedWithTheRouteMeant() {
		runner().run((context) -> {
			StepVerifier.create(context.getBean(LlmGateway.class).chat(ChatRequest.builder().user("hello").route("defualt").build()))
				.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(LlmInvalidRequestException.class)
					.hasMessageStartingWith("Unknown route 'defualt' (did you mean 'default'?): configure it under llm.routes"))
				.verify(Duration.ofSeconds(10));
			assertThat(this.upstreams.primary().getRequestCount()).isZero();
		});
	}

	@Test
	void selectorThatNamesAnUnknownRouteIsACallerError() {
		runner().withBean(RouteSelector.class, () -> (request) -> "premium").run((context) -> {
			StepVerifier.create(context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("hello")))
				.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(LlmInvalidRequestException.class)
					.hasMessageContaining("Unknown route 'premium'")
					.hasMessageContaining("llm.routes"))
				.verify(Duration.ofSeconds(10));
			assertThat(this.upstreams.primary().getRequestCount()).isZero();
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
		});
	}

}
