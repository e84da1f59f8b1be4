package dev.llmresilience.support;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that only moves when told to. */
public final class MutableClock extends Clock {

	private volatile Instant now;

	public MutableClock(Instant start) {
		this.now = start;
	}

	public static MutableClock at(String instant) {
		return new MutableClock(Instant.parse(instant));
	}

	public void advance(Duration duration) {
		this.now = this.now.plus(duration);
	}

	public void set(Instant instant) {
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
