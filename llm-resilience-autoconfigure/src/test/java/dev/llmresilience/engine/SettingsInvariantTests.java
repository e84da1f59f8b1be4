package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.EndpointSettings.InvalidSettingException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The settings records refuse values that break their own rules, naming the setting, for code that
 * builds them without the auto-configuration (whose resolver reports the same words at the property).
 */
class SettingsInvariantTests {

	@Test
	void breakerRefusesAMinimumNumberOfCallsTheWindowCannotHold() {
		assertThatExceptionOfType(InvalidSettingException.class)
			.isThrownBy(() -> new EndpointSettings.CircuitBreakerSettings(10, 11, 50f, Duration.ofSeconds(30), 3,
					Duration.ofSeconds(60), 100f))
			.satisfies((ex) -> {
				assertThat(ex.setting()).isEqualTo("circuit-breaker.minimum-number-of-calls");
				assertThat(ex.problem()).isEqualTo("is 11, more than the sliding window of 10 calls can ever hold");
				assertThat(ex.action()).startsWith("Set it to at most circuit-breaker.sliding-window-size (10)");
			});
		assertThat(new EndpointSettings.CircuitBreakerSettings(10, 10, 50f, Duration.ofSeconds(30), 3,
				Duration.ofSeconds(60), 100f).minimumNumberOfCalls()).isEqualTo(10);
	}

	@Test
	void retryRefusesAShrinkingBackoffAndAJitterThatIsNoFraction() {
		assertThatExceptionOfType(InvalidSettingException.class)
			.isThrownBy(() -> retry(0.5, 0.25))
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo("retry.multiplier"))
			.withMessageContaining("is 0.5, less than 1");
		assertThatExceptionOfType(InvalidSettingException.class)
			.isThrownBy(() -> retry(2.0, 1.0))
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo("retry.jitter"))
			.withMessageContaining("is 1.0, outside [0, 1)");
		assertThat(retry(1.0, 0).backoffMillis(3)).isEqualTo(500);
	}

	private static EndpointSettings.RetrySettings retry(double multiplier, double jitter) {
		return new EndpointSettings.RetrySettings(3, Duration.ofMillis(500), multiplier, Duration.ofSeconds(8), jitter,
				Duration.ofSeconds(10));
	}

}
