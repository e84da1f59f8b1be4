package dev.llmresilience.engine;

import java.util.Optional;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ContentPart;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

/**
 * The tokens a request will cost before it is sent, for an endpoint with a known token limit: the
 * prompt's tokens, by OpenAI's tokenizer (JTokkit) when the model is one it has an encoding for,
 * else its characters / 4, plus the request's {@code max_tokens}. The encoding is loaded on first
 * need on a thread that may block (it reads a few megabytes); calls until it is loaded take the
 * characters / 4.
 */
final class TokenEstimate {

	private final String model;

	private volatile @Nullable Encoding encoding;

	private volatile boolean looked;

	TokenEstimate(String model) {
		this.model = model;
	}

	/**
	 * The prompt's tokens.
	 * @param request the request
	 * @return the estimate
	 */
	long prompt(ChatRequest request) {
		Encoding encoding = encoding();
		long tokens = 0;
		for (ChatMessage message : request.messages()) {
			// a few tokens of framing per message, as OpenAI's cookbook counts them
			tokens += 4 + count(encoding, message.content());
			for (ContentPart part : message.parts()) {
				if (part instanceof ContentPart.Text text) {
					tokens += count(encoding, text.text());
				}
			}
		}
		return tokens;
	}

	/**
	 * The completion's most: the request's {@code max_tokens}.
	 * @param request the request
	 * @return its max tokens, or 0 when it sets none
	 */
	static long completion(ChatRequest request) {
		return (request.maxTokens() != null) ? Math.max(0, request.maxTokens()) : 0;
	}

	private static long count(@Nullable Encoding encoding, @Nullable String text) {
		if (text == null || text.isEmpty()) {
			return 0;
		}
		return (encoding != null) ? encoding.countTokens(text) : (text.length() + 3) / 4;
	}

	private @Nullable Encoding encoding() {
		Encoding encoding = this.encoding;
		if (encoding == null && !this.looked) {
			this.looked = true;
			Schedulers.boundedElastic().schedule(() -> {
				Optional<Encoding> found = Encodings.newLazyEncodingRegistry().getEncodingForModel(this.model);
				this.encoding = found.orElse(null);
			});
		}
		return encoding;
	}

}
