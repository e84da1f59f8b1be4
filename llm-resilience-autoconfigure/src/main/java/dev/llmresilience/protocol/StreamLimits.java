package dev.llmresilience.protocol;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmUpstreamException;
import reactor.core.publisher.Flux;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * The caps on what one streamed attempt may send, so that a faulty provider cannot grow memory
 * without bound: {@code max-stream-size} bytes of body and {@code max-stream-events} server-sent
 * events in all ({@code max-response-size} already caps each event), and at most
 * {@value #MAX_LEADING_WHITESPACE} characters of whitespace kept before the first token. Past a
 * cap the attempt fails as {@link Outcome#MALFORMED_RESPONSE}: retried and counted as a provider
 * failure before the first token, a broken stream after it. One instance serves one attempt.
 */
final class StreamLimits {

	/** Whitespace kept before a stream's first token, in characters; the rest is dropped. */
	static final int MAX_LEADING_WHITESPACE = 1024;

	private final String endpoint;

	private final long maxBytes;

	private final long maxEvents;

	private long bytes;

	private long events;

	private int leadingWhitespace;

	StreamLimits(ClientSettings settings) {
		this.endpoint = settings.name();
		this.maxBytes = settings.maxStreamSize();
		this.maxEvents = settings.maxStreamEvents();
	}

	/**
	 * Pass a body through, failing it once it has sent more than {@code max-stream-size} bytes.
	 * @param body the body
	 * @return the body, cut at the cap
	 */
	Flux<DataBuffer> countBytes(Flux<DataBuffer> body) {
		return body.handle((buffer, sink) -> {
			this.bytes += buffer.readableByteCount();
			if (this.bytes > this.maxBytes) {
				DataBufferUtils.release(buffer);
				sink.error(exceeded("more than max-stream-size (" + this.maxBytes + " bytes)"));
			}
			else {
				sink.next(buffer);
			}
		});
	}

	/**
	 * Count one event.
	 * @throws LlmUpstreamException once there are more than {@code max-stream-events}
	 */
	void countEvent() {
		if (++this.events > this.maxEvents) {
			throw exceeded("more than max-stream-events (" + this.maxEvents + " events)");
		}
	}

	/**
	 * The part of a whitespace-only text, sent before the first token, that is still kept.
	 * @param whitespace the text
	 * @return its first characters, up to what is left of {@value #MAX_LEADING_WHITESPACE}
	 */
	String keepLeading(String whitespace) {
		int kept = Math.min(whitespace.length(), MAX_LEADING_WHITESPACE - this.leadingWhitespace);
		this.leadingWhitespace += kept;
		return (kept == whitespace.length()) ? whitespace : whitespace.substring(0, kept);
	}

	private LlmUpstreamException exceeded(String what) {
		return new LlmUpstreamException(this.endpoint, Outcome.MALFORMED_RESPONSE, 200, null,
				"The stream sent " + what + " in one attempt; the attempt is ended as a faulty answer. Raise the "
						+ "endpoint's max-stream-size or max-stream-events if its answers are really that long.",
				null);
	}

}
