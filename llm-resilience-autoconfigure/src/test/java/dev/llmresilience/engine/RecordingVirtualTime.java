package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

import static org.awaitility.Awaitility.await;

/**
 * Reactor's virtual time, installed for every scheduler, that also remembers the delay of each
 * timer set on it. A background attempt ends on an HTTP client thread and only then sets the
 * deferred queue's next timer: a test waits for that timer before it moves the clock past it.
 */
final class RecordingVirtualTime extends VirtualTimeScheduler {

	private final List<Duration> timers = new CopyOnWriteArrayList<>();

	private RecordingVirtualTime() {
		super(false);
	}

	static RecordingVirtualTime install() {
		RecordingVirtualTime time = new RecordingVirtualTime();
		VirtualTimeScheduler.set(time);
		return time;
	}

	@Override
	public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
		Disposable scheduled = super.schedule(task, delay, unit);
		this.timers.add(Duration.ofNanos(unit.toNanos(delay)));
		return scheduled;
	}

	/**
	 * Wait until the given number of timers of exactly this delay have been set.
	 * @param delay the delay
	 * @param count how many
	 */
	void awaitTimers(Duration delay, int count) {
		await().atMost(Duration.ofSeconds(10)).until(() -> timers(delay) >= count);
	}

	long timers(Duration delay) {
		return this.timers.stream().filter(delay::equals).count();
	}

}
