package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ContentPart;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hedge delay learned per endpoint and per prompt size (docs/hedging.md): each size bucket of an
 * endpoint learns its own first-token percentile, so that a long prompt is not hedged at a short
 * one's delay and a short one does not wait as long as a long one; a size with too few samples
 * takes the endpoint's percentile over all sizes, and with too few of those the fixed delay.
 */
class PromptSizeDelayTests {

	private static final HedgeSettings BY_SIZE = new HedgeSettings(true, true, 95, Duration.ofSeconds(2),
			Duration.ofMillis(10), 0.1, Duration.ofMinutes(1), true);

	private final FirstTokenTimes all = new FirstTokenTimes();

	private final PromptSizeTimes bySize = new PromptSizeTimes();

	// what the gateway records for one attempt: the endpoint's times and its size's
	private void record(int bucket, Duration firstToken, int times) {
		for (int i = 0; i < times; i++) {
			this.all.record(firstToken.toNanos());
			this.bySize.record(bucket, firstToken.toNanos());
		}
	}

	@Test
	void longPromptsLearnTheirOwnLongerDelayWhileShortOnesKeepAShortOne() {
		int shortPrompts = PromptSizeTimes.bucket(100);
		int longPrompts = PromptSizeTimes.bucket(12_000);
		record(shortPrompts, Duration.ofMillis(200), 100);
		record(longPrompts, Duration.ofSeconds(8), 100);
		HedgePolicy policy = new HedgePolicy("default", BY_SIZE);
		assertThat(Duration.ofNanos(policy.delayNanos(this.all, this.bySize, shortPrompts)))
			.isBetween(Duration.ofMillis(200), Duration.ofMillis(218));
		assertThat(Duration.ofNanos(policy.delayNanos(this.all, this.bySize, longPrompts)))
			.isBetween(Duration.ofSeconds(8), Duration.ofMillis(8_720));
		// per endpoint only, both wait for the p95 of the mix: the long prompts' time
		HedgePolicy perEndpoint = new HedgePolicy("default", withByPromptSize(false));
		assertThat(Duration.ofNanos(perEndpoint.delayNanos(this.all, this.bySize, shortPrompts)))
			.isGreaterThanOrEqualTo(Duration.ofSeconds(8));
	}

	@Test
	void sizeWithTooFewSamplesTakesTheEndpointsDelayThenItsOwn() {
		int shortPrompts = PromptSizeTimes.bucket(100);
		int middle = PromptSizeTimes.bucket(2_000);
		record(shortPrompts, Duration.ofMillis(200), 80);
		record(PromptSizeTimes.bucket(30_000), Duration.ofSeconds(8), 20);
		HedgePolicy policy = new HedgePolicy("default", BY_SIZE);
		Duration endpointWide = this.all.percentile(95);
		assertThat(endpointWide).isGreaterThanOrEqualTo(Duration.ofSeconds(8));
		assertThat(this.bySize.times(middle)).as("no times kept for a size before its first").isNull();
		assertThat(Duration.ofNanos(policy.delayNanos(this.all, this.bySize, middle))).as("none of its own yet")
			.isEqualTo(endpointWide);
		record(middle, Duration.ofSeconds(1), FirstTokenTimes.MIN_SAMPLES - 1);
		assertThat(Duration.ofNanos(policy.delayNanos(this.all, this.bySize, middle)))
			.as("19 samples of its own: the endpoint's p95")
			.isEqualTo(this.all.percentile(95));
		record(middle, Duration.ofSeconds(1), 1);
		assertThat(Duration.ofNanos(policy.delayNanos(this.all, this.bySize, middle))).as("20: its own")
			.isBetween(Duration.ofSeconds(1), Duration.ofMillis(1_090));
		assertThat(Duration.ofNanos(policy.delayNanos(this.all, this.bySize, PromptSizeTimes.NONE)))
			.as("no size known: the endpoint's")
			.isEqualTo(this.all.percentile(95));
	}

	@Test
	void tooFewSamplesAnywhereTakeTheFixedDelay() {
		record(0, Duration.ofMillis(200), FirstTokenTimes.MIN_SAMPLES - 1);
		HedgePolicy policy = new HedgePolicy("default", BY_SIZE);
		assertThat(policy.delayNanos(this.all, this.bySize, 0)).isEqualTo(Duration.ofSeconds(2).toNanos());
	}

	@Test
	void sizeIsTheCharactersOfTheMessagesInBucketsOfPowersOfFour() {
		assertThat(PromptSizeTimes.bucket(0)).isZero();
		assertThat(PromptSizeTimes.bucket(255)).isZero();
		assertThat(PromptSizeTimes.bucket(256)).isEqualTo(1);
		assertThat(PromptSizeTimes.bucket(1023)).isEqualTo(1);
		assertThat(PromptSizeTimes.bucket(1024)).isEqualTo(2);
		assertThat(PromptSizeTimes.bucket(4095)).isEqualTo(2);
		assertThat(PromptSizeTimes.bucket(4096)).isEqualTo(3);
		assertThat(PromptSizeTimes.bucket(16_384)).isEqualTo(4);
		assertThat(PromptSizeTimes.bucket(65_535)).isEqualTo(4);
		assertThat(PromptSizeTimes.bucket(65_536)).isEqualTo(5);
		assertThat(PromptSizeTimes.bucket(Long.MAX_VALUE)).isEqualTo(PromptSizeTimes.BUCKETS - 1);
		ChatRequest request = ChatRequest.builder()
			.message(ChatMessage.system("x".repeat(100)))
			.message(new ChatMessage(ChatMessage.USER, null,
					List.of(ContentPart.text("y".repeat(200)), ContentPart.imageUrl("https://example.com/a.png")),
					List.of(), null, null))
			.build();
		assertThat(PromptSizeTimes.chars(request)).isEqualTo(300);
		assertThat(PromptSizeTimes.bucket(request)).isEqualTo(1);
		assertThat(PromptSizeTimes.label(1)).isEqualTo("<1K");
	}

	private static HedgeSettings withByPromptSize(boolean byPromptSize) {
		return new HedgeSettings(true, true, 95, Duration.ofSeconds(2), Duration.ofMillis(10), 0.1,
				Duration.ofMinutes(1), byPromptSize);
	}

}
