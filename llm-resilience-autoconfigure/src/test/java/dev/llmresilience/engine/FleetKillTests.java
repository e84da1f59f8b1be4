package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.LlmGateway;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A replica that defers a request and is killed with SIGKILL at a random point of the request's
 * life loses nothing, and nothing ends twice: right after it printed the ticket, while its
 * background attempt waits on the provider, or once the provider has written the answer (at once
 * or a few milliseconds later, before or after the end reaches Redis). Each run kills a fresh
 * child JVM; the survivor, in this JVM, must then answer the ticket COMPLETED, and the fleet must
 * have published a completion event for it with the answer stored: the survivor's, or the child's
 * when the child's end was recorded and its event published before it died. An event comes at
 * least once: a child killed after it published its event and before Redis let go of the
 * request's message has it published again by the survivor, which takes the message over (counted
 * and printed, {@link Outcome#eventTwice()}); no run may end without one.
 *
 * <p>{@code -Dllm.kill.runs} sets the number of runs (50: about 90 s on a two-core machine that is
 * not shared; fewer for a quick look on a busy one), {@code -Dllm.kill.seed} replays the
 * kill points of a failed run (each run prints its seed). A child is started, and warms its JVM,
 * while the run before it is being taken over, and the classes children load are archived
 * once (CDS) and mapped by every child: see docs/reliability.md for the times measured.
 */
class FleetKillTests {

	private static final String PREFIX = "llm:kill:";

	private static final int RUNS = Integer.getInteger("llm.kill.runs", 50);

	private static final long SEED = Long.getLong("llm.kill.seed", System.nanoTime());

	/** {@code -Dllm.kill.point} kills every run at that point (the delays still drawn from the seed). */
	private static final @Nullable String POINT = System.getProperty("llm.kill.point");

	@RegisterExtension
	final RedisFleet redis = new RedisFleet();

	private KillPointProvider provider;

	private final List<ChildReplica> children = new ArrayList<>();

	private ChildReplica.JavaCommand java;

	/** The completion events each killed child published before it died, by ticket. */
	private final Map<String, List<String>> childEvents = new ConcurrentHashMap<>();

	enum KillPoint {

		/** As soon as the ticket is printed. */
		AFTER_TICKET,

		/** While the background attempt is held by the provider. */
		MID_ATTEMPT,

		/** Once the provider has written the answer, before the end is recorded (or just after). */
		AFTER_ANSWER

	}

	/**
	 * One run, as the user sees it at its end.
	 * @param events the completion events published for the ticket, in the child and the survivor
	 * @param childEvents how many of them the child published
	 * @param note what went wrong before the end was awaited, if anything
	 */
	record Outcome(int run, KillPoint point, long delayMillis, @Nullable String ticket, int exit,
			DeferredResult.@Nullable State state, @Nullable String content, List<String> events, int childEvents,
			int survivorAnswers, @Nullable String note) {

		@Nullable String problem() {
			if (this.note != null) {
				return this.note;
			}
			if (this.exit != 137) {
				return "the child was not killed by SIGKILL: exit " + this.exit;
			}
			if (this.state == null) {
				return "lost: the survivor does not know the ticket";
			}
			if (this.state != DeferredResult.State.COMPLETED) {
				return "not completed: " + this.state;
			}
			if (this.events.isEmpty()) {
				return "no completion event for the answer stored, '" + this.content + "'";
			}
			if (!this.events.stream().allMatch((event) -> event.equals(this.content))) {
				return "an event's answer in " + this.events + " is not the one stored, '" + this.content + "'";
			}
			if (this.events.size() > 1 && !eventTwice()) {
				return this.events.size() + " completion events " + this.events + " (" + this.childEvents
						+ " of them the child's)";
			}
			return null;
		}

		/**
		 * The child published the event, and was killed before Redis let go of the request's
		 * message: the survivor took the message over and published the event again. At least once.
		 */
		boolean eventTwice() {
			return this.events.size() == 2 && this.childEvents == 1 && isChildsAnswer();
		}

		private boolean isChildsAnswer() {
			return this.content != null && this.content.startsWith("child answer to ");
		}

		Outcome withEvents(List<String> events, int childEvents) {
			return new Outcome(this.run, this.point, this.delayMillis, this.ticket, this.exit, this.state, this.content,
					events, childEvents, this.survivorAnswers, this.note);
		}

		@Override
		public String toString() {
			String problem = problem();
			return "run " + this.run + " " + this.point + ((this.delayMillis > 0) ? " +" + this.delayMillis + " ms" : "")
					+ ": exit " + this.exit + ", " + this.state + " '" + this.content + "', " + this.events.size()
					+ " event(s), survivor answered " + this.survivorAnswers + ((problem != null) ? ": FAILED, " + problem : "")
					+ (eventTwice() ? ": the event came twice, the child's and the survivor's" : "");
		}

	}

	@BeforeEach
	void start() {
		this.provider = new KillPointProvider();
	}

	@AfterEach
	void stop() throws InterruptedException {
		for (ChildReplica child : this.children) {
			child.kill();
		}
		this.provider.close();
	}

	@Test
	void requestsOfReplicasKilledAtRandomPointsEndOnceOnTheSurvivor() {
		System.out.println("FleetKillTests: " + RUNS + " runs, seed " + SEED + " (replay: -Dllm.kill.seed=" + SEED + ")");
		Random random = new Random(SEED);
		Replicas.run(List.of(this.redis.replica("survivor", "llm.shared-state.key-prefix=" + PREFIX,
				"llm.shared-state.replica-timeout=1s", "llm.endpoints.primary.base-url=" + this.provider.baseUrl("survivor"),
				"llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1",
				"llm.gateway.deferral.delay=200ms", "llm.gateway.deferral.max-attempts=5")), (replicas) -> {
				ApplicationContext survivor = replicas.get(0);
				long started = System.nanoTime();
				this.java = ChildReplica.JavaCommand.prepare(this.redis.port(), this.provider.baseUrl("warm"), PREFIX);
				System.out.println("FleetKillTests: child JVMs prepared in "
						+ Duration.ofNanos(System.nanoTime() - started).toSeconds() + " s");
				List<Outcome> outcomes = new ArrayList<>();
				ChildReplica next = child();
				for (int run = 0; run < RUNS; run++) {
					ChildReplica child = next;
					// the next child warms up while this run is taken over
					next = (run + 1 < RUNS) ? child() : null;
					KillPoint drawn = KillPoint.values()[random.nextInt(KillPoint.values().length)];
					KillPoint point = (POINT != null) ? KillPoint.valueOf(POINT) : drawn;
					long delay = (point == KillPoint.AFTER_ANSWER && random.nextBoolean()) ? 1 + random.nextInt(20) : 0;
					Outcome outcome = run(survivor, child, run, point, delay);
					outcomes.add(outcome);
					System.out.println("FleetKillTests: " + outcome);
				}
				// A late event comes within a heartbeat or two of the last run: the survivor's, for a
				// child killed after its own event (which is allowed), or a second end (which the
				// recount below fails on). Wait until no event has come for 3 s, then judge them all.
				awaitQuiet(survivor.getBean(FleetEvents.class));
				List<Outcome> recounted = outcomes.stream().map((outcome) -> recount(survivor, outcome)).toList();
				List<Outcome> failed = recounted.stream().filter((outcome) -> outcome.problem() != null).toList();
				System.out.println("FleetKillTests: " + (RUNS - failed.size()) + " of " + RUNS + " runs ended once, in "
						+ Duration.ofNanos(System.nanoTime() - started).toSeconds() + " s; seed " + SEED + "; "
						+ recounted.stream().filter(Outcome::eventTwice).count()
						+ " completion event(s) published twice (the child's, and the survivor's on taking it over)");
				assertThat(failed).as("runs whose request did not end exactly once (replay: -Dllm.kill.seed=" + SEED
						+ " -Dllm.kill.runs=" + RUNS + ")").isEmpty();
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(survivor.getBean(DeferredQueue.class).pending()).isZero());
				assertThat(survivor.getBean(FleetEvents.class).failed).isEmpty();
			});
	}

	/**
	 * Waits until the survivor has published no completion event for 3 s (a replica's timeout of
	 * 1 s and its heartbeats), at most 60 s.
	 */
	private static void awaitQuiet(FleetEvents events) {
		long[] seen = { events.completed.size(), System.nanoTime() };
		await("3 s without a new completion event").atMost(Duration.ofSeconds(60))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> {
				int size = events.completed.size();
				if (size != seen[0]) {
					seen[0] = size;
					seen[1] = System.nanoTime();
				}
				return System.nanoTime() - seen[1] >= Duration.ofSeconds(3).toNanos();
			});
	}

	private ChildReplica child() {
		ChildReplica child = ChildReplica.start(this.java, this.redis.port(), this.provider.baseUrl("warm"),
				this.provider.baseUrl("child"), PREFIX);
		this.children.add(child);
		return child;
	}

	private Outcome run(ApplicationContext survivor, ChildReplica child, int run, KillPoint point, long delay)
			throws InterruptedException {
		String prompt = "run-" + run;
		KillPointProvider.Run calls = this.provider.expect(prompt, point == KillPoint.AFTER_ANSWER);
		long waited = System.nanoTime();
		child.await("READY", 120);
		long ready = System.nanoTime();
		child.go("child-" + run, prompt);
		String line = child.await("TICKET ", 60);
		long ticketed = System.nanoTime();
		String problem = null;
		if (point == KillPoint.MID_ATTEMPT && !calls.awaitChildAttempting(30)) {
			problem = "the child made no background attempt";
		}
		if (point == KillPoint.AFTER_ANSWER) {
			if (!calls.awaitChildAnswered(30)) {
				problem = "the child made no background attempt";
			}
			else if (delay > 0) {
				// the kill point itself: a few milliseconds into the end's way to Redis
				Thread.sleep(delay);
			}
		}
		int exit = child.kill();
		long killed = System.nanoTime();
		calls.release();
		this.children.remove(child);
		if (!line.startsWith("TICKET DEFERRED dfr_")) {
			return new Outcome(run, point, delay, null, exit, null, null, List.of(), 0, calls.survivorAnswers(),
					"answered " + line);
		}
		String ticket = line.substring("TICKET DEFERRED ".length());
		this.childEvents.put(ticket, child.completed(ticket));
		DeferredResult result = awaitEnd(survivor, ticket);
		Outcome outcome = new Outcome(run, point, delay, ticket, exit, (result != null) ? result.state() : null,
				(result != null && result.response() != null) ? result.response().content() : null, List.of(), 0,
				calls.survivorAnswers(), problem);
		if (outcome.state() == DeferredResult.State.COMPLETED) {
			// the survivor's event follows its end's reply from Redis, or its taking over of the child's message
			long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
			while (recount(survivor, outcome).events().isEmpty() && System.nanoTime() < deadline) {
				Thread.sleep(50);
			}
		}
		System.out.println("FleetKillTests: run " + run + " waited " + millis(waited, ready) + " ms for its child, "
				+ millis(ready, ticketed) + " ms for the ticket, " + millis(ticketed, killed) + " ms to the kill, "
				+ millis(killed, System.nanoTime()) + " ms to the end");
		return recount(survivor, outcome);
	}

	private static long millis(long from, long to) {
		return Duration.ofNanos(to - from).toMillis();
	}

	/**
	 * The request's state on the survivor once it ended, or as it stands when it is lost: unknown
	 * for 3 s after the kill (an entry in Redis is known at once), or still pending after 30 s.
	 */
	private static @Nullable DeferredResult awaitEnd(ApplicationContext survivor, String ticket)
			throws InterruptedException {
		LlmGateway gateway = survivor.getBean(LlmGateway.class);
		long unknownSince = System.nanoTime();
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		DeferredResult result = null;
		while (System.nanoTime() < deadline) {
			result = gateway.deferred(ticket).block(Duration.ofSeconds(5));
			if (result != null && result.state() != DeferredResult.State.PENDING) {
				return result;
			}
			if (result == null && System.nanoTime() - unknownSince > Duration.ofSeconds(3).toNanos()) {
				return null;
			}
			if (result != null) {
				unknownSince = System.nanoTime();
			}
			Thread.sleep(50);
		}
		return result;
	}

	private Outcome recount(ApplicationContext survivor, Outcome outcome) {
		if (outcome.ticket() == null) {
			return outcome;
		}
		List<String> child = this.childEvents.getOrDefault(outcome.ticket(), List.of());
		List<String> events = new ArrayList<>(child);
		survivor.getBean(FleetEvents.class)
			.completed
			.stream()
			.filter((event) -> event.getTicket().equals(outcome.ticket()))
			.map(DeferredRequestCompletedEvent::getResponse)
			.forEach((response) -> events.add(response.content()));
		return outcome.withEvents(events, child.size());
	}

}
