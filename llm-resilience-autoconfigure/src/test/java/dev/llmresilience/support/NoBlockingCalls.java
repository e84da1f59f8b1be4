package dev.llmresilience.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import reactor.blockhound.BlockingOperationError;

/**
 * Fails the test during which a blocking call was made on a Reactor non-blocking thread, even when the
 * code under test caught BlockHound's {@link BlockingOperationError} (a fallback tier, an
 * {@code onErrorResume}) and the test would otherwise pass. BlockHound reports every such call here
 * ({@link BlockHoundAllowList}); this extension is registered for every test class through JUnit's
 * extension auto-detection ({@code junit-platform.properties}).
 */
public final class NoBlockingCalls implements TestExecutionExceptionHandler, AfterEachCallback, AfterAllCallback {

	private static final int STACK_FRAMES = 40;

	private static final Queue<Found> found = new ConcurrentLinkedQueue<>();

	/**
	 * Record a blocking call; called on the thread that made it, so it must not block itself. Its stack
	 * is copied now: the error travels on through the code under test, which may change it.
	 * @param error BlockHound's error for the call, with the stack of the thread that made it
	 */
	static void record(BlockingOperationError error) {
		found.add(new Found(error, error.getStackTrace().clone(), Thread.currentThread().getName()));
	}

	/**
	 * Take the blocking calls recorded since the last look, for a test that makes one on purpose.
	 * @return the calls, oldest first
	 */
	public static List<BlockingOperationError> take() {
		return takeFound().stream().map(Found::error).toList();
	}

	private static List<Found> takeFound() {
		List<Found> taken = new ArrayList<>();
		for (Found call = found.poll(); call != null; call = found.poll()) {
			taken.add(call);
		}
		return taken;
	}

	/**
	 * A test that failed after a blocking call most often failed because of it (an error where an
	 * answer was awaited, a subscriber left hanging): the blocking calls are the failure, the test's
	 * own is kept as suppressed.
	 */
	@Override
	public void handleTestExecutionException(ExtensionContext context, Throwable thrown) throws Throwable {
		AssertionError failure = failure(context.getDisplayName());
		if (failure == null) {
			throw thrown;
		}
		failure.addSuppressed(thrown);
		throw failure;
	}

	@Override
	public void afterEach(ExtensionContext context) {
		failIfAnyFound(context.getDisplayName());
	}

	@Override
	public void afterAll(ExtensionContext context) {
		failIfAnyFound(context.getDisplayName());
	}

	/**
	 * Fail if a blocking call was recorded since the last look, naming each call and its caller.
	 * @param during what ran meanwhile (a test's name), for the message
	 * @throws AssertionError with BlockHound's errors (their stacks) as suppressed exceptions
	 */
	public static void failIfAnyFound(String during) {
		AssertionError failure = failure(during);
		if (failure != null) {
			throw failure;
		}
	}

	private static @Nullable AssertionError failure(String during) {
		List<Found> taken = takeFound();
		if (taken.isEmpty()) {
			return null;
		}
		StringBuilder message = new StringBuilder().append(taken.size())
			.append(" blocking call(s) on a Reactor non-blocking thread during ")
			.append(during)
			.append(" (fix the caller, or allow a harmless JDK or library internal in BlockHoundAllowList):");
		taken.forEach((call) -> message.append("\n  ").append(call.error().getMessage()).append(" on ").append(call.thread())
			.append(" from ").append(caller(call.stack())).append(stack(call.stack())));
		AssertionError failure = new AssertionError(message.toString());
		taken.forEach((call) -> failure.addSuppressed(call.error()));
		return failure;
	}

	/** The stack of the call, BlockHound's frames left out: reports trim the suppressed errors' stacks. */
	private static String stack(StackTraceElement[] frames) {
		StringBuilder stack = new StringBuilder();
		int shown = 0;
		for (StackTraceElement frame : frames) {
			String name = frame.getClassName();
			if (!name.startsWith("reactor.blockhound.") && !name.startsWith(BlockHoundAllowList.class.getName())
					&& shown++ < STACK_FRAMES) {
				stack.append("\n      at ").append(frame);
			}
		}
		return stack.toString();
	}

	/** The first frame outside the JDK, BlockHound and Reactor: most often the code to fix. */
	private static String caller(StackTraceElement[] frames) {
		for (StackTraceElement frame : frames) {
			String name = frame.getClassName();
			if (!name.startsWith("java.") && !name.startsWith("jdk.") && !name.startsWith("sun.")
					&& !name.startsWith("reactor.") && !name.startsWith(BlockHoundAllowList.class.getName())) {
				return frame.toString();
			}
		}
		return "(no frame outside the JDK and Reactor)";
	}

	private record Found(BlockingOperationError error, StackTraceElement[] stack, String thread) {
	}

}
