package dev.llmresilience.engine;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/failure-rules.md, the rows about a 2xx body: what is an answer, what is retried and counted,
 * and what the content filter leads to. Every test runs against two local HTTP servers.
 */
class AnswerBodyRulesTests {

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
	void answerWithContentIsReturnedAsASuccess() {
		this.upstreams.primary().enqueue(completion("Paris."));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(response.content()).isEqualTo("Paris.");
			assertThat(response.endpoint()).isEqualTo("primary");
			assertThat(response.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(1));
		});
	}

	@Test
	void answerWithToolCallsAndNoContentIsReturnedAsASuccess() {
		this.upstreams.primary().enqueue(json(200, fixture("openai/spec-chat-completion-tool-calls.json")));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(response.content()).isEmpty();
			assertThat(response.finishReason()).isEqualTo("tool_calls");
			assertThat(response.toolCalls())
				.containsExactly(new ToolCall("call_abc123", "get_current_weather", "{\n\"location\": \"Boston, MA\"\n}"));
			assertThat(response.usage()).isEqualTo(new Usage(82, 17));
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(1));
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "   ", " \n\t " })
	void emptyOrBlankContentIsRetriedCountedThenFallsBack(String content) {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(completion(content));
		}
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.endpoint()).isEqualTo("backup");
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.EMPTY_RESPONSE, Outcome.EMPTY_RESPONSE, Outcome.EMPTY_RESPONSE, Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "<html><body>502 Bad Gateway</body></html>", "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\"}",
			"{\"choices\":[]}", "" })
	void bodyThatIsNotJsonOrHasNoChoicesIsRetriedCountedThenFallsBack(String body) {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(json(200, body));
		}
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.MALFORMED_RESPONSE, Outcome.MALFORMED_RESPONSE, Outcome.MALFORMED_RESPONSE,
						Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

	@Test
	void finishReasonContentFilterIsNeitherRetriedNorCountedAndFallsBack() {
		this.upstreams.primary().enqueue(json(200, fixture("azure/azure-200-finish-reason-content-filter.json")));
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.CONTENT_FILTERED, Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
		});
	}

	@Test
	void contentFilterErrorIsNeitherRetriedNorCountedAndFallsBack() {
		this.upstreams.primary().enqueue(json(400, fixture("azure/azure-400-content-filter-error.json")));
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.CONTENT_FILTERED, Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
		});
	}

	@Test
	void contentFilteredOnEveryEndpointAnswersThatTheContentWasFiltered() {
		this.upstreams.primary().enqueue(json(400, fixture("azure/azure-400-content-filter-error.json")));
		this.upstreams.backup().enqueue(json(200, fixture("azure/azure-200-finish-reason-content-filter.json")));
		this.upstreams.runner()
			.withPropertyValues("llm.gateway.content-filtered-message=Blocked by the content filter.")
			.run((context) -> {
				ChatResponse response = chat(context);
				assertThat(response.tier()).isEqualTo(Tier.BUSY);
				assertThat(response.content()).isEqualTo("Blocked by the content filter.");
				assertThat(response.finishReason()).isEqualTo("content_filter");
				assertThat(response.endpoint()).isNull();
				assertThat(response.attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.CONTENT_FILTERED, Outcome.CONTENT_FILTERED);
				assertThat(this.upstreams.primary().getRequestCount()).isOne();
				assertThat(this.upstreams.backup().getRequestCount()).isOne();
				assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
				assertThat(BreakerCalls.of(context, "backup")).isEqualTo(BreakerCalls.NONE);
			});
	}

}
