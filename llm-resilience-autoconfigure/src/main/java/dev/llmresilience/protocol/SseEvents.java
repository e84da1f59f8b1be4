package dev.llmresilience.protocol;

import java.util.List;
import java.util.Map;

import org.apache.commons.logging.impl.NoOpLog;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.ResolvableType;
import org.springframework.core.codec.StringDecoder;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.codec.ServerSentEvent;

/**
 * Splits a body of server-sent events into events by the rules of Spring's
 * {@code ServerSentEventHttpMessageReader} (lines split at LF or CRLF by Spring's
 * {@link StringDecoder}, an event ends at a blank line, {@code data:} lines joined with LF, one
 * space after the colon dropped, {@code :} comments, {@code event:}), with the same cap on one
 * event's size. Written here rather than used from Spring because Spring's reader logs every line
 * it decodes at DEBUG and TRACE ({@code org.springframework.core.codec}, and
 * {@code org.springframework.web.HttpLogging}) with no way to turn it off for one client: a
 * provider's line may repeat the key, and every line holds part of an answer.
 */
final class SseEvents {

	private static final ResolvableType LINE = ResolvableType.forClass(String.class);

	private final StringDecoder lines = StringDecoder.textPlainOnly();

	private final int maxEventSize;

	SseEvents(int maxEventSize) {
		this.maxEventSize = maxEventSize;
		this.lines.setMaxInMemorySize(maxEventSize);
		this.lines.setLogger(new NoOpLog());
	}

	Flux<ServerSentEvent<String>> read(Flux<DataBuffer> body) {
		return Flux.defer(() -> {
			long[] eventSize = new long[1];
			return this.lines.decode(body, LINE, null, Map.of())
				.doOnNext((line) -> {
					eventSize[0] = line.isEmpty() ? 0 : eventSize[0] + line.length();
					if (eventSize[0] > this.maxEventSize) {
						throw new DataBufferLimitException("Exceeded limit on max bytes per SSE event: " + this.maxEventSize);
					}
				})
				.bufferUntil(String::isEmpty)
				.concatMap((event) -> Mono.justOrEmpty(event(event)));
		});
	}

	private static ServerSentEvent<String> event(List<String> lines) {
		ServerSentEvent.Builder<String> event = ServerSentEvent.builder();
		StringBuilder data = null;
		StringBuilder comment = null;
		boolean any = false;
		for (String line : lines) {
			if (line.startsWith("data:")) {
				data = (data != null) ? data : new StringBuilder();
				data.append(line, (line.length() > 5 && line.charAt(5) == ' ') ? 6 : 5, line.length()).append('\n');
			}
			else if (line.startsWith("event:")) {
				event.event(line.substring(6).trim());
			}
			else if (line.startsWith(":")) {
				comment = (comment != null) ? comment : new StringBuilder();
				comment.append(line.substring(1).trim()).append('\n');
			}
			any |= !line.isEmpty();
		}
		if (comment != null) {
			event.comment(comment.substring(0, comment.length() - 1));
		}
		if (data != null) {
			event.data(data.substring(0, data.length() - 1));
		}
		return any ? event.build() : null;
	}

}
