package dev.llmresilience.engine;

import java.time.Duration;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.EncodingType;
import dev.llmresilience.chat.ChatRequest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The tokens a request is estimated to cost before it is sent against a known token limit: OpenAI's
 * tokenizer for a model it has an encoding for, once loaded off the caller's thread; characters / 4
 * for any other model; plus {@code max_tokens}.
 */
class TokenEstimateTests {

	private static final String PROMPT = "Summarise the quarterly report in three short bullet points, please.";

	@Test
	void anOpenAiModelIsCountedWithItsEncodingOnceLoaded() {
		TokenEstimate estimate = new TokenEstimate("gpt-4o");
		ChatRequest request = ChatRequest.ofUser(PROMPT);
		// the first estimate does not wait for the encoding: characters / 4
		assertThat(estimate.prompt(request)).isEqualTo(4 + (PROMPT.length() + 3) / 4);
		int tokens = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.O200K_BASE).countTokens(PROMPT);
		await().atMost(Duration.ofSeconds(20)).until(() -> estimate.prompt(request) == 4 + tokens);
		assertThat(tokens).isNotEqualTo((PROMPT.length() + 3) / 4);
	}

	@Test
	void anotherModelIsCountedAsCharactersByFour() {
		TokenEstimate estimate = new TokenEstimate("claude-sonnet-4-5");
		ChatRequest request = ChatRequest.builder().system("Be brief.").user(PROMPT).maxTokens(200).build();
		long expected = 4 + (9 + 3) / 4 + 4 + (PROMPT.length() + 3) / 4;
		assertThat(estimate.prompt(request)).isEqualTo(expected);
		assertThat(TokenEstimate.completion(request)).isEqualTo(200);
		assertThat(TokenEstimate.completion(ChatRequest.ofUser(PROMPT))).isZero();
	}

}
