package dev.llmresilience.engine;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An endpoint's first-token times, which an adaptive hedge delay reads: percentiles of
 * the recent attempts, at most 9 % above the true value, none before enough samples, and a window
 * that forgets a provider's old speed.
 */
class FirstTokenTimesTests {

	@Test
	void noPercentileBeforeTwentySamples() {
		FirstTokenTimes times = new FirstTokenTimes();
		for (int i = 0; i < FirstTokenTimes.MIN_SAMPLES - 1; i++) {
			times.record(Duration.ofMillis(800).toNanos());
		}
		assertThat(times.percentile(95)).isNull();
		times.record(Duration.ofMillis(800).toNanos());
		assertThat(times.percentile(95)).isBetween(Duration.ofMillis(800), Duration.ofMillis(872));
		assertThat(times.count()).isEqualTo(FirstTokenTimes.MIN_SAMPLES);
	}

	@Test
	void percentilesAreReadAtMostOneBucketAboveTheTrueValue() {
		FirstTokenTimes times = new FirstTokenTimes();
		// 1 ms, 2 ms, ... 100 ms: p50 is 50 ms, p95 is 95 ms
		for (int i = 1; i <= 100; i++) {
			times.record(Duration.ofMillis(i).toNanos());
		}
		assertThat(times.percentile(50)).isBetween(Duration.ofMillis(50), Duration.ofMillis(55));
		assertThat(times.percentile(95)).isBetween(Duration.ofMillis(95), Duration.ofMillis(104));
		assertThat(times.percentile(99.9)).isBetween(Duration.ofMillis(100), Duration.ofMillis(109));
	}

	@Test
	void oldSamplesLeaveTheWindow() {
		FirstTokenTimes times = new FirstTokenTimes();
		for (int i = 0; i < FirstTokenTimes.WINDOW; i++) {
			times.record(Duration.ofSeconds(15).toNanos());
		}
		assertThat(times.percentile(50)).isGreaterThanOrEqualTo(Duration.ofSeconds(15));
		// the provider is fast again: after two halves the slow answers are forgotten
		for (int i = 0; i < FirstTokenTimes.WINDOW; i++) {
			times.record(Duration.ofMillis(500).toNanos());
		}
		assertThat(times.percentile(99)).isBetween(Duration.ofMillis(500), Duration.ofMillis(545));
	}

	@Test
	void bucketsCoverMicrosecondsToHours() {
		assertThat(FirstTokenTimes.upperEdge(FirstTokenTimes.bucket(0))).isGreaterThanOrEqualTo(8_000);
		long hour = Duration.ofHours(1).toNanos();
		assertThat(FirstTokenTimes.upperEdge(FirstTokenTimes.bucket(hour))).isBetween(hour, hour + hour / 8);
		assertThat(FirstTokenTimes.bucket(Long.MAX_VALUE)).isEqualTo(32 * 8 - 1);
	}

	@Test
	void percentileFallingOnTheLastSampleOfABucketReadsThatBucket() {
		FirstTokenTimes times = new FirstTokenTimes();
		for (int i = 0; i < FirstTokenTimes.MIN_SAMPLES; i++) {
			times.record(Duration.ofMillis(10).toNanos());
			times.record(Duration.ofSeconds(10).toNanos());
		}
		// the 20th of 40 samples is the last fast one: the median is the fast answers' time
		assertThat(times.percentile(50)).isBetween(Duration.ofMillis(10), Duration.ofMillis(11));
		assertThat(times.percentile(51)).isBetween(Duration.ofSeconds(10), Duration.ofMillis(10_900));
	}

	@Test
	void windowHoldsTheNewerHalfAndWhatIsLeftOfTheOlderUntilTheNewerIsFull() {
		FirstTokenTimes times = new FirstTokenTimes();
		for (int i = 0; i < FirstTokenTimes.WINDOW; i++) {
			times.record(Duration.ofSeconds(15).toNanos());
		}
		for (int i = 0; i < FirstTokenTimes.HALF; i++) {
			times.record(Duration.ofMillis(500).toNanos());
		}
		// half fast, half slow: the slow half is still in the window
		assertThat(times.percentile(50)).isBetween(Duration.ofMillis(500), Duration.ofMillis(545));
		assertThat(times.percentile(51)).isGreaterThanOrEqualTo(Duration.ofSeconds(15));
		times.record(Duration.ofMillis(500).toNanos());
		// the next sample starts a new half in place of the slow one
		assertThat(times.percentile(100)).isBetween(Duration.ofMillis(500), Duration.ofMillis(545));
		assertThat(times.count()).isEqualTo(FirstTokenTimes.WINDOW + FirstTokenTimes.HALF + 1);
	}

	@Test
	void timeAtTheTopOfTheRangeIsRecordedInTheLastBucket() {
		FirstTokenTimes times = new FirstTokenTimes();
		// 2^35 microseconds, about 9.5 hours: the upper edge of the last bucket
		long top = (1L << 35) * 1000;
		assertThat(FirstTokenTimes.bucket(top)).isEqualTo(32 * 8 - 1);
		assertThat(FirstTokenTimes.bucket(top - 1000)).isEqualTo(32 * 8 - 1);
		for (int i = 0; i < FirstTokenTimes.MIN_SAMPLES; i++) {
			times.record(top);
		}
		assertThat(times.percentile(50)).isEqualTo(Duration.ofNanos(top));
	}

}
