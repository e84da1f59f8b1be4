package dev.llmresilience.degrade;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that only moves when told to. */
final class MutableClock extends Clock {

	private volatile Instant now;

	MutableClock(Instant start) {
		this.now = start;
	}

	static MutableClock at(String instant) {
		return new MutableClock(Instant.parse(instant));
	}

	void advance(Duration duration) {
		this.now = this.now.plus(duration);
	}

	void set(Instant instant) {
		this.now = instant;
	}

	@Override
	public Instant instant() {
		return this.now;
	}

	@Override
	public ZoneId getZone() {
		return ZoneOffset.UTC;
	}

	@Override
	public Clock withZone(ZoneId zone) {
		return this;
	}

}
