package dev.llmresilience.support;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;

/**
 * A fake provider that enforces a real request window: at most {@code limit} requests per
 * {@code window}, the window starting with its first request, measured on the time it is given (a
 * test's virtual time). It announces the window on every answer, 429s included, in its protocol's
 * documented headers: OpenAI and Azure OpenAI {@code x-ratelimit-{limit,remaining,reset}-requests}
 * (the reset a Go duration such as {@code 6m0s}) with the token window unbounded
 * ({@code x-ratelimit-reset-tokens: 0s}, as the recorded answers have it); Anthropic
 * {@code anthropic-ratelimit-requests-{limit,remaining,reset}} (the reset an RFC 3339 time, whole
 * seconds, as Anthropic sends it) with its token windows full. A request past the limit is
 * answered 429.
 */
public final class RateLimitedProvider extends Dispatcher {

	private final Wire wire;

	private final int limit;

	private final Duration window;

	private final LongSupplier nanos;

	private final Clock wall;

	private final AtomicInteger received = new AtomicInteger();

	private final AtomicInteger refused = new AtomicInteger();

	private long windowStart = Long.MIN_VALUE;

	private int used;

	/**
	 * A provider.
	 * @param wire its protocol
	 * @param limit requests per window
	 * @param window the window's length
	 * @param nanos the time its window is measured on
	 * @param wall the wall clock an Anthropic reset time is written against
	 */
	public RateLimitedProvider(Wire wire, int limit, Duration window, LongSupplier nanos, Clock wall) {
		this.wire = wire;
		this.limit = limit;
		this.window = window;
		this.nanos = nanos;
		this.wall = wall;
	}

	@Override
	public synchronized MockResponse dispatch(RecordedRequest request) {
		long now = this.nanos.getAsLong();
		if (this.windowStart == Long.MIN_VALUE || now - this.windowStart >= this.window.toNanos()) {
			this.windowStart = now;
			this.used = 0;
		}
		this.received.incrementAndGet();
		Duration reset = Duration.ofNanos(this.windowStart + this.window.toNanos() - now);
		if (this.used >= this.limit) {
			this.refused.incrementAndGet();
			return announce(this.wire.error(429), 0, reset);
		}
		this.used++;
		return announce(this.wire.answer("answer " + this.received.get()), this.limit - this.used, reset);
	}

	private MockResponse announce(MockResponse response, int remaining, Duration reset) {
		MockResponse.Builder builder = response.newBuilder();
		if (this.wire == Wire.ANTHROPIC) {
			String at = Instant.now(this.wall).plus(reset).truncatedTo(ChronoUnit.SECONDS).plusSeconds(1).toString();
			builder.addHeader("anthropic-ratelimit-requests-limit", String.valueOf(this.limit))
				.addHeader("anthropic-ratelimit-requests-remaining", String.valueOf(remaining))
				.addHeader("anthropic-ratelimit-requests-reset", at)
				.addHeader("anthropic-ratelimit-tokens-limit", "96000")
				.addHeader("anthropic-ratelimit-tokens-remaining", "96000")
				.addHeader("anthropic-ratelimit-tokens-reset", at);
		}
		else {
			builder.addHeader("x-ratelimit-limit-requests", String.valueOf(this.limit))
				.addHeader("x-ratelimit-remaining-requests", String.valueOf(remaining))
				.addHeader("x-ratelimit-reset-requests", goDuration(reset))
				.addHeader("x-ratelimit-limit-tokens", "150000000")
				.addHeader("x-ratelimit-remaining-tokens", "149999992")
				.addHeader("x-ratelimit-reset-tokens", "0s");
		}
		return builder.build();
	}

	// As Go prints a duration: 6m0s, 9.5s, 20ms.
	static String goDuration(Duration duration) {
		long millis = duration.toMillis();
		if (millis < 1000) {
			return millis + "ms";
		}
		long minutes = millis / 60_000;
		double seconds = (millis % 60_000) / 1000.0;
		String secondsText = (seconds == Math.rint(seconds)) ? String.valueOf((long) seconds) : String.valueOf(seconds);
		return (minutes > 0) ? minutes + "m" + secondsText + "s" : secondsText + "s";
	}

	/** @return the requests the provider received */
	public int received() {
		return this.received.get();
	}

	/** @return the requests it answered with 429 */
	public int refused() {
		return this.refused.get();
	}

}
