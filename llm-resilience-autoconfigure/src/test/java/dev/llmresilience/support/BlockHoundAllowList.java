package dev.llmresilience.support;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * How BlockHound runs in these tests: every blocking call on a Reactor non-blocking thread (Reactor
 * Netty's and Lettuce's event loops, the parallel and single schedulers) raises BlockHound's error
 * where it is made and is reported to {@link NoBlockingCalls}, which fails the test; and the
 * allow-list of blocking calls known to be harmless, each a library internal named by class and
 * method, with why it may block. BlockHound is installed before the first test by its JUnit Platform
 * listener and finds this class through {@code META-INF/services}; Reactor's, Netty's and Spring's
 * own integrations (their allow-lists) are loaded beside it.
 */
public final class BlockHoundAllowList implements BlockHoundIntegration {

	@Override
	public void applyTo(BlockHound.Builder builder) {
		builder.blockingMethodCallback((method) -> {
			BlockingOperationError error = new BlockingOperationError(method);
			NoBlockingCalls.record(error);
			throw error;
		});
		// Resilience4j's breaker windows guard their counters with a ReentrantLock held for a few
		// additions (no I/O, no callback inside): a call that finds it taken parks for as long as another
		// thread needs to count one outcome. Seen as Unsafe#park from record under the hammer test.
		for (String window : new String[] { "io.github.resilience4j.core.metrics.FixedSizeSlidingWindowMetrics",
				"io.github.resilience4j.core.metrics.SlidingTimeWindowMetrics" }) {
			builder.allowBlockingCallsInside(window, "record");
			builder.allowBlockingCallsInside(window, "getSnapshot");
		}
		// The same lock, held while a breaker's OPEN state moves to HALF_OPEN (a compare-and-set and a
		// new window, no I/O), by whichever thread first asks for a permit once the wait is over.
		builder.allowBlockingCallsInside("io.github.resilience4j.circuitbreaker.internal.CircuitBreakerStateMachine$OpenState",
				"toHalfOpenState");
		// The call-volume guard's AtomicRateLimiter, after losing a compare-and-set to another thread,
		// parks for 1 ns before it tries again: a back-off of one scheduler tick, never a wait for a permit
		// (the guard's timeout is zero).
		builder.allowBlockingCallsInside("io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter",
				"compareAndSet");
		// Caffeine's eviction lock, taken after a write to drain its buffers of bookkeeping (an
		// in-memory policy update, no I/O, no user code): a writer that finds it taken waits for another
		// thread's drain, with tryLock and a bound. Seen as Unsafe#park from BoundedLocalCache.lock, under
		// the hammer test, from the fallback cache's put.
		builder.allowBlockingCallsInside("com.github.benmanes.caffeine.cache.BoundedLocalCache", "lock");
		// Netty's adaptive buffer allocator (Netty 4.2's default) takes a magazine's StampedLock to
		// give a magazine back while it grows its group (in-memory bookkeeping of its own buffers, no
		// I/O): an event loop that finds it taken waits for another loop's allocation. Seen as
		// Unsafe#park from Magazine.free, on a Lettuce event loop reconnecting to a Redis started again
		// while the machine was loaded.
		builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "free");
		// Jackson builds a type's deserializer once and caches it, under a lock, so that two threads
		// do not build it twice (in-memory, no I/O): the first answers read at once on several event
		// loops may wait for one another's build. Seen as Unsafe#park from
		// DeserializerCache._createAndCacheValueDeserializer, 8 calls reading their first answer at once.
		builder.allowBlockingCallsInside("tools.jackson.databind.deser.DeserializerCache",
				"_createAndCacheValueDeserializer");
		// Netty loads a native library (the epoll transport's) once, when its class is first used:
		// the library file is read and copied from the jar, on whichever thread gets there first. Seen
		// as RandomAccessFile#readBytes from NativeLibraryLoader.load on the parallel scheduler.
		builder.allowBlockingCallsInside("io.netty.util.internal.NativeLibraryLoader", "load");
		// reactor-test's virtual clock keeps its timers in a PriorityBlockingQueue whose lock is held
		// for one insertion or removal (no I/O): an event loop that sets or cancels an attempt's timer
		// while the test thread moves the clock waits for it. Only in tests in virtual time; seen as
		// Unsafe#park from TimedRunnable.dispose under 20 calls a second of virtual traffic.
		builder.allowBlockingCallsInside("reactor.test.scheduler.VirtualTimeScheduler$TimedRunnable", "dispose");
		builder.allowBlockingCallsInside("reactor.test.scheduler.VirtualTimeScheduler$VirtualTimeWorker", "schedule");
	}

	/** Applied after the libraries' integrations, so that this callback is the one in force. */
	@Override
	public int getPriority() {
		return Integer.MAX_VALUE;
	}

}
