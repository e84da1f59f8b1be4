package dev.llmresilience.engine;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The latency estimate least-latency balancing compares, on a virtual clock (nanoseconds).
 */
class PeakEwmaTests {

	private static final long MS = 1_000_000;

	private static final long SECOND = 1000 * MS;

	private final PeakEwma latency = new PeakEwma(Duration.ofSeconds(10));

	@Test
	void nothingMeasuredIsZeroSoANewEndpointIsTriedFirst() {
		assertThat(this.latency.estimate(0)).isZero();
	}

	@Test
	void aSlowerAnswerReplacesTheEstimateAtOnce() {
		this.latency.observe(10 * MS, 0);
		this.latency.observe(400 * MS, 1);
		assertThat(this.latency.estimate(1)).isEqualTo(400 * MS);
	}

	@Test
	void aFasterAnswerPullsItDownByTheTimeSinceTheLastOne() {
		this.latency.observe(400 * MS, 0);
		this.latency.observe(10 * MS, SECOND);
		// a second later it keeps e^(-1/10) of the old estimate
		double blended = 400 * MS * Math.exp(-0.1) + 10 * MS * (1 - Math.exp(-0.1));
		assertThat(this.latency.estimate(SECOND)).isCloseTo(blended, within(1.0));
		// a minute later, almost nothing of it
		this.latency.observe(10 * MS, 61 * SECOND);
		assertThat(this.latency.estimate(61 * SECOND)).isCloseTo(blended * Math.exp(-6) + 10 * MS * (1 - Math.exp(-6)),
				within(1.0))
			.isLessThan(11 * MS);
	}

	@Test
	void leftAloneItDecaysTowardZero() {
		this.latency.observe(400 * MS, 0);
		assertThat(this.latency.estimate(10 * SECOND)).isCloseTo(400 * MS / Math.E, within(1.0));
		assertThat(this.latency.estimate(60 * SECOND)).isLessThan(1 * MS);
	}

	@Test
	void aFailureNeverLowersIt() {
		this.latency.observe(400 * MS, 0);
		this.latency.penalize(2 * MS, SECOND);
		assertThat(this.latency.estimate(SECOND)).isEqualTo(400 * MS);
		this.latency.penalize(10 * SECOND, 2 * SECOND);
		assertThat(this.latency.estimate(2 * SECOND)).isEqualTo(10 * SECOND);
	}

}
