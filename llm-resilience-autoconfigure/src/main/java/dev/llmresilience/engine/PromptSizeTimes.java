package dev.llmresilience.engine;

import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ContentPart;
import org.jspecify.annotations.Nullable;

/**
 * An endpoint's times to first token by the size of the prompt, so that a hedge delay can wait for
 * what a prompt of that size normally takes: a long prompt's prefill is slow on every endpoint, a
 * short one that is slow is a straggler. The size is the characters of the request's message
 * contents (text parts included), counted without reading them; the buckets are powers of 4: below
 * 256, 1K, 4K, 16K, 64K characters, and 64K or more. Each bucket is a {@link FirstTokenTimes} of its
 * own (the last 256 to 512 attempts of that size, no percentile below
 * {@value FirstTokenTimes#MIN_SAMPLES}), made when the first attempt of that size is recorded.
 */
final class PromptSizeTimes {

	/** The number of size buckets. */
	static final int BUCKETS = 6;

	/** No size known (a synthetic probe): recorded in no bucket. */
	static final int NONE = -1;

	private static final List<String> LABELS = List.of("<256", "<1K", "<4K", "<16K", "<64K", ">=64K");

	// made on a bucket's first sample (4 KiB each): most endpoints see a few sizes only
	private final AtomicReferenceArray<FirstTokenTimes> buckets = new AtomicReferenceArray<>(BUCKETS);

	/**
	 * Record one attempt's time to first token in its prompt's bucket.
	 * @param bucket the bucket, or {@link #NONE}
	 * @param nanos the time, in nanoseconds
	 */
	void record(int bucket, long nanos) {
		if (bucket < 0) {
			return;
		}
		FirstTokenTimes times = this.buckets.get(bucket);
		if (times == null) {
			this.buckets.compareAndSet(bucket, null, new FirstTokenTimes());
			times = this.buckets.get(bucket);
		}
		times.record(nanos);
	}

	/**
	 * The first-token times of one bucket.
	 * @param bucket the bucket, 0 to {@value #BUCKETS} - 1
	 * @return its times, or {@code null} before its first sample
	 */
	@Nullable FirstTokenTimes times(int bucket) {
		return this.buckets.get(bucket);
	}

	/**
	 * The bucket of a prompt of so many characters.
	 * @param chars the characters
	 * @return the bucket
	 */
	static int bucket(long chars) {
		// below 256 is bucket 0, then one bucket per factor of 4
		if (chars < 256) {
			return 0;
		}
		int bits = 63 - Long.numberOfLeadingZeros(chars);
		return Math.min(BUCKETS - 1, (bits - 8) / 2 + 1);
	}

	/**
	 * The bucket of a request's prompt.
	 * @param request the request
	 * @return the bucket
	 */
	static int bucket(ChatRequest request) {
		return bucket(chars(request));
	}

	/**
	 * The characters of a request's message contents and text parts.
	 * @param request the request
	 * @return the count
	 */
	static long chars(ChatRequest request) {
		long chars = 0;
		List<ChatMessage> messages = request.messages();
		for (int i = 0; i < messages.size(); i++) {
			ChatMessage message = messages.get(i);
			chars += length(message.content());
			List<ContentPart> parts = message.parts();
			for (int j = 0; j < parts.size(); j++) {
				if (parts.get(j) instanceof ContentPart.Text text) {
					chars += length(text.text());
				}
			}
		}
		return chars;
	}

	/**
	 * How a bucket is named in {@code /actuator/llmbreakers}.
	 * @param bucket the bucket
	 * @return its name, such as {@code <4K} (characters)
	 */
	static String label(int bucket) {
		return LABELS.get(bucket);
	}

	private static int length(@Nullable String text) {
		return (text != null) ? text.length() : 0;
	}

}
