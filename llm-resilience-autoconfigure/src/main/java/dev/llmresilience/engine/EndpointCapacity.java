package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings.ProviderLimits;
import dev.llmresilience.protocol.ClientSettings.RateLimitListener;
import dev.llmresilience.spi.SharedState.CallCounter;
import dev.llmresilience.spi.SharedState.CapacityShare;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

/**
 * What one endpoint's provider will still take before it answers 429 (docs/capacity.md): its
 * configured {@code rate-limits} counted over one-minute windows, what its response headers
 * announced (each window's remaining until its reset, less the calls sent since), and the window a
 * 429 emptied until its reset. A call it cannot take is not sent. Counted per replica, unless it
 * is {@linkplain #share shared}: then an emptied window (a 429, or headers saying nothing is left)
 * is told to the fleet, which stops sending until its reset, and the configured requests and
 * tokens per minute are counted for the fleet. Until a limit is configured or announced it takes every call and costs
 * one volatile read.
 */
final class EndpointCapacity implements RateLimitListener {

	/** The dimensions of a provider's limit, in the order of {@link ProviderLimits}. */
	enum Dimension {

		REQUESTS, TOKENS, INPUT_TOKENS, OUTPUT_TOKENS

	}

	private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);

	private static final long MINUTE_MILLIS = TimeUnit.MINUTES.toMillis(1);

	private static final int DIMENSIONS = Dimension.values().length;

	private final EndpointSettings.RateLimits configured;

	private final TokenEstimate estimate;

	private final Clock clock;

	// no lock on the way of a call while nothing is known
	private volatile boolean active;

	// What the headers said, per dimension: the limit, what is left (less what was sent since) and
	// when the window is whole again (scheduler nanos). Past its reset a window of known limit is
	// taken as whole again for another span (the longest reset the headers gave), estimated until
	// an answer says; without a limit it is inactive once past its reset.
	private final long[] learnedLimit = new long[DIMENSIONS];

	private final long[] learnedSpan = new long[DIMENSIONS];

	private final boolean[] estimated = new boolean[DIMENSIONS];

	private final long[] learnedRemaining = new long[DIMENSIONS];

	private final long[] learnedReset = new long[DIMENSIONS];

	private final boolean[] learned = new boolean[DIMENSIONS];

	// The configured limits' current windows: their start and what was sent in them.
	private long requestWindow = Long.MIN_VALUE;

	private long requestsUsed;

	private long tokenWindow = Long.MIN_VALUE;

	private long tokensUsed;

	// A 429 empties everything until its reset.
	private long emptyUntil = Long.MIN_VALUE;

	private volatile CapacityShare share = CapacityShare.LOCAL;

	// the endpoint's calls in flight upstream (its bulkhead's), the answer being read among them
	private volatile IntSupplier inFlight = () -> 1;

	private volatile String name = "";

	// the fleet's count of the configured requests and tokens per minute, when shared
	private volatile @Nullable CallCounter fleetRequests;

	private volatile @Nullable CallCounter fleetTokens;

	// the latest end of an emptied window told to the fleet (scheduler nanos): each is told once
	private long told = Long.MIN_VALUE;

	EndpointCapacity(EndpointSettings settings, Clock clock) {
		this.configured = settings.upstream().rateLimits();
		this.estimate = new TokenEstimate(settings.upstream().model());
		this.clock = clock;
		this.active = this.configured.known();
	}

	/**
	 * Take a call, if what is known of the provider's limits lets it through: one request and its
	 * estimated tokens.
	 * @param request the request
	 * @param now the scheduler's time
	 * @return the tokens reserved for it (0 when none are counted), or -1 - the nanoseconds until
	 * the reset when it cannot be taken
	 */
	long take(ChatRequest request, long now) {
		if (!this.active) {
			return 0;
		}
		synchronized (this) {
			if (now < this.emptyUntil) {
				return -1 - (this.emptyUntil - now);
			}
			boolean countsTokens = this.configured.tokensPerMinute() > 0 || learned(Dimension.TOKENS, now)
					|| learned(Dimension.INPUT_TOKENS, now) || learned(Dimension.OUTPUT_TOKENS, now);
			long input = countsTokens ? this.estimate.prompt(request) : 0;
			long output = countsTokens ? TokenEstimate.completion(request) : 0;
			long tokens = input + output;
			long wait = Math.max(Math.max(refusal(Dimension.REQUESTS, 1, now), refusal(Dimension.TOKENS, tokens, now)),
					Math.max(refusal(Dimension.INPUT_TOKENS, input, now), refusal(Dimension.OUTPUT_TOKENS, output, now)));
			wait = Math.max(wait, configuredRefusal(tokens, now));
			if (wait > 0) {
				return -1 - wait;
			}
			CallCounter fleet = this.fleetRequests;
			if (fleet != null && !fleet.tryAcquire()) {
				return -1 - untilTheNextMinute();
			}
			CallCounter fleetTokens = this.fleetTokens;
			if (fleetTokens != null && tokens > 0 && !fleetTokens.tryAcquire(fleetCost(tokens))) {
				if (fleet != null) {
					fleet.settle(-1);
				}
				return -1 - untilTheNextMinute();
			}
			take(Dimension.REQUESTS, 1);
			take(Dimension.TOKENS, tokens);
			take(Dimension.INPUT_TOKENS, input);
			take(Dimension.OUTPUT_TOKENS, output);
			this.requestsUsed++;
			this.tokensUsed += tokens;
			return tokens;
		}
	}

	// How long until a learned window can take the cost, 0 when it can now (or knows nothing).
	private long refusal(Dimension dimension, long cost, long now) {
		int d = dimension.ordinal();
		if (!learned(dimension, now) || cost <= 0) {
			return 0;
		}
		// a call larger than the whole window is the provider's to refuse: it would never fit
		boolean fits = this.learnedRemaining[d] >= cost || (this.learnedLimit[d] >= 0 && cost > this.learnedLimit[d]);
		return fits ? 0 : this.learnedReset[d] - now;
	}

	private long configuredRefusal(long tokens, long now) {
		long wait = 0;
		if (this.configured.requestsPerMinute() > 0 && this.fleetRequests == null) {
			if (!current(this.requestWindow, now)) {
				this.requestWindow = now;
				this.requestsUsed = 0;
			}
			if (this.requestsUsed + 1 > this.configured.requestsPerMinute()) {
				wait = this.requestWindow + MINUTE - now;
			}
		}
		if (this.configured.tokensPerMinute() > 0 && this.fleetTokens == null) {
			if (!current(this.tokenWindow, now)) {
				this.tokenWindow = now;
				this.tokensUsed = 0;
			}
			if (this.tokensUsed > 0 && this.tokensUsed + tokens > this.configured.tokensPerMinute()) {
				wait = Math.max(wait, this.tokenWindow + MINUTE - now);
			}
		}
		return wait;
	}

	// A call larger than the whole window takes all of it: the provider's to refuse, as here
	private int fleetCost(long tokens) {
		return (int) Math.min(tokens, Math.min(Integer.MAX_VALUE, this.configured.tokensPerMinute()));
	}

	// whether a configured window started and has not run its minute yet
	private static boolean current(long window, long now) {
		return window != Long.MIN_VALUE && now - window < MINUTE;
	}

	private void take(Dimension dimension, long cost) {
		int d = dimension.ordinal();
		if (this.learned[d] && this.learnedRemaining[d] >= 0) {
			this.learnedRemaining[d] = Math.max(0, this.learnedRemaining[d] - cost);
		}
	}

	private boolean learned(Dimension dimension, long now) {
		int d = dimension.ordinal();
		if (this.learned[d] && now >= this.learnedReset[d]) {
			if (this.learnedLimit[d] > 0 && this.learnedSpan[d] > 0) {
				// past its reset the window is whole again, for as long as the provider's windows last
				long spans = 1 + (now - this.learnedReset[d]) / this.learnedSpan[d];
				this.learnedReset[d] += spans * this.learnedSpan[d];
				this.learnedRemaining[d] = this.learnedLimit[d];
				this.estimated[d] = true;
			}
			else {
				// a window whole again of unknown limit: nothing is known until the next answer says
				this.learned[d] = false;
			}
		}
		return this.learned[d] && this.learnedRemaining[d] >= 0;
	}

	/**
	 * Correct a call's estimate by what its answer reported: the configured window counts what the
	 * call really cost (a learned one hears it from the answer's own headers).
	 * @param reserved what {@link #take} reserved
	 * @param usage what the answer reported, or {@code null}
	 */
	void used(long reserved, @Nullable Usage usage) {
		if (usage == null || this.configured.tokensPerMinute() <= 0) {
			return;
		}
		long actual = ((usage.promptTokens() != null) ? usage.promptTokens() : 0)
				+ ((usage.completionTokens() != null) ? usage.completionTokens() : 0);
		synchronized (this) {
			this.tokensUsed = Math.max(0, this.tokensUsed + actual - reserved);
		}
		CallCounter fleet = this.fleetTokens;
		if (fleet != null && reserved > 0) {
			fleet.settle((int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, actual - fleetCost(reserved))));
		}
	}

	/**
	 * A 429: nothing more is sent until its reset, the wait it asked for or, without one, the
	 * latest reset of the windows its headers said are empty. Without either nothing is known of
	 * its end, and the retry's rules alone apply.
	 * @param retryAfter the wait the 429 asked for, or {@code null}
	 * @param now the scheduler's time
	 */
	void rateLimited(@Nullable Duration retryAfter, long now) {
		synchronized (this) {
			long until = (retryAfter != null) ? now + retryAfter.toNanos() : Long.MIN_VALUE;
			if (retryAfter == null) {
				for (Dimension dimension : Dimension.values()) {
					int d = dimension.ordinal();
					if (learned(dimension, now) && this.learnedRemaining[d] == 0) {
						until = Math.max(until, this.learnedReset[d]);
					}
				}
			}
			if (until > now) {
				this.emptyUntil = Math.max(this.emptyUntil, until);
				this.active = true;
			}
		}
		tell(now);
	}

	/**
	 * Where to read the endpoint's calls in flight upstream.
	 * @param calls its count, the call whose answer is being read included
	 */
	void inFlight(IntSupplier calls) {
		this.inFlight = calls;
	}

	/**
	 * Share this endpoint's capacity with the fleet: what empties it here is told to the others,
	 * what they tell empties it here, and a configured requests- and tokens-per-minute are the
	 * fleet's.
	 * @param endpoint the endpoint's name
	 * @param share the fleet's share
	 */
	void share(String endpoint, CapacityShare share) {
		this.name = endpoint;
		if (this.configured.requestsPerMinute() > 0) {
			this.fleetRequests = share.requestsPerMinute(endpoint,
					(int) Math.min(Integer.MAX_VALUE, this.configured.requestsPerMinute()));
		}
		if (this.configured.tokensPerMinute() > 0) {
			this.fleetTokens = share.tokensPerMinute(endpoint,
					(int) Math.min(Integer.MAX_VALUE, this.configured.tokensPerMinute()));
		}
		share.onEmptied((name, until) -> {
			if (name.equals(endpoint)) {
				emptied(until);
			}
		});
		this.share = share;
	}

	// another replica's 429, or headers that said nothing is left: nothing is sent here either until then
	private void emptied(Instant until) {
		long now = Schedulers.parallel().now(TimeUnit.NANOSECONDS);
		long left = Duration.between(this.clock.instant(), until).toNanos();
		if (left <= 0) {
			return;
		}
		synchronized (this) {
			this.emptyUntil = Math.max(this.emptyUntil, now + left);
			// heard from the fleet: not told back to it
			this.told = Math.max(this.told, now + left);
			this.active = true;
		}
	}

	// Tell the fleet when this endpoint takes calls again, if that was learned here and not told yet:
	// a 429's wait, or the latest reset of a window its headers said is spent.
	private void tell(long now) {
		CapacityShare fleet = this.share;
		if (fleet == CapacityShare.LOCAL) {
			return;
		}
		long until;
		synchronized (this) {
			until = this.emptyUntil;
			for (Dimension dimension : Dimension.values()) {
				int d = dimension.ordinal();
				if (learned(dimension, now) && this.learnedRemaining[d] == 0) {
					until = Math.max(until, this.learnedReset[d]);
				}
			}
			// a window told already is not told again unless it ends later by a second or more
			if (until <= now || until < this.told + TimeUnit.SECONDS.toNanos(1)) {
				return;
			}
			this.told = until;
		}
		fleet.emptied(this.name, at(until, now));
	}

	// the fleet's windows are the clock's minutes
	private long untilTheNextMinute() {
		return TimeUnit.MILLISECONDS.toNanos(MINUTE_MILLIS - Math.floorMod(this.clock.millis(), MINUTE_MILLIS));
	}

	@Override
	public void limits(ProviderLimits limits) {
		long now = Schedulers.parallel().now(TimeUnit.NANOSECONDS);
		synchronized (this) {
			learn(Dimension.REQUESTS, limits.requests(), now);
			learn(Dimension.TOKENS, limits.tokens(), now);
			learn(Dimension.INPUT_TOKENS, limits.inputTokens(), now);
			learn(Dimension.OUTPUT_TOKENS, limits.outputTokens(), now);
		}
		tell(now);
	}

	private void learn(Dimension dimension, ProviderLimits.@Nullable Window window, long now) {
		if (window == null || window.remaining() < 0) {
			return;
		}
		int d = dimension.ordinal();
		// without a reset the window is taken for a minute, the span providers' limits are given in
		long reset = now + ((window.reset() != null) ? window.reset().toNanos() : MINUTE);
		if (reset <= now) {
			return;
		}
		boolean known = learned(dimension, now);
		long span = this.learnedSpan[d];
		if (known && span > 0) {
			// The reset is read here an answer's way later than the provider wrote it, so the window
			// known here ends later than the provider's: half a span tells the windows apart. An
			// answer from the next window (its call sent in the last moments of the one known here)
			// begins that window rather than extending this one with what was left of it; one from the
			// window just ended, read after this one was taken as whole again, is stale.
			if (this.estimated[d] && reset < this.learnedReset[d] - span / 2) {
				return;
			}
			known = reset <= this.learnedReset[d] + span / 2;
		}
		this.learnedSpan[d] = Math.max(span, reset - now);
		// an answer to a call sent before others does not count them: never believe more is left
		// than the calls sent since leave of the window already known; and of a window first
		// announced, the other requests in flight now were sent after this one, as far as anyone
		// knows (from then on, each call sent is taken from what is left here)
		// a window only estimated to be whole again is replaced by what an answer says
		boolean current = known && !this.estimated[d];
		this.estimated[d] = false;
		long said = (dimension == Dimension.REQUESTS && !current)
				? Math.max(0, window.remaining() - Math.max(0, this.inFlight.getAsInt() - 1)) : window.remaining();
		this.learnedRemaining[d] = current ? Math.min(this.learnedRemaining[d], said) : said;
		this.learnedLimit[d] = window.limit();
		this.learnedReset[d] = current ? Math.max(this.learnedReset[d], reset) : reset;
		this.learned[d] = true;
		this.active = true;
	}

	/**
	 * One dimension as the actuator shows it: what is learned while a window is current, else what is
	 * configured.
	 * @param dimension requests or tokens
	 * @param now the scheduler's time
	 * @return the window, or {@code null} when nothing is known of it
	 */
	synchronized @Nullable Known known(Dimension dimension, long now) {
		int d = dimension.ordinal();
		boolean empty = now < this.emptyUntil;
		if (learned(dimension, now)) {
			long reset = empty ? Math.max(this.emptyUntil, this.learnedReset[d]) : this.learnedReset[d];
			return new Known((this.learnedLimit[d] >= 0) ? this.learnedLimit[d] : null,
					empty ? 0 : this.learnedRemaining[d], at(reset, now), Source.LEARNED);
		}
		long limit = (dimension == Dimension.REQUESTS) ? this.configured.requestsPerMinute()
				: (dimension == Dimension.TOKENS) ? this.configured.tokensPerMinute() : 0;
		long window = (dimension == Dimension.REQUESTS) ? this.requestWindow : this.tokenWindow;
		long used = (dimension == Dimension.REQUESTS) ? this.requestsUsed : this.tokensUsed;
		CallCounter fleet = (dimension == Dimension.REQUESTS) ? this.fleetRequests
				: (dimension == Dimension.TOKENS) ? this.fleetTokens : null;
		if (limit > 0 && fleet != null) {
			long next = untilTheNextMinute();
			return new Known(limit, empty ? 0 : Math.max(0, limit - fleet.callsThisWindow()),
					at(empty ? Math.max(this.emptyUntil, now + next) : now + next, now), Source.CONFIGURED);
		}
		if (limit > 0) {
			boolean current = current(window, now);
			return new Known(limit, empty ? 0 : Math.max(0, limit - (current ? used : 0)),
					empty ? at(this.emptyUntil, now) : current ? at(window + MINUTE, now) : null, Source.CONFIGURED);
		}
		return (empty && dimension == Dimension.REQUESTS) ? new Known(null, 0L, at(this.emptyUntil, now), Source.LEARNED)
				: null;
	}

	private Instant at(long nanos, long now) {
		return this.clock.instant().plusNanos(nanos - now);
	}

	/** Where a known limit comes from. */
	enum Source {

		/** {@code rate-limits.*}. */
		CONFIGURED,
		/** The provider's response headers, or its 429. */
		LEARNED

	}

	/**
	 * One known window.
	 * @param limit its limit, or {@code null} when not said
	 * @param remaining what is left of it
	 * @param reset when it is whole again, or {@code null} when it is whole now
	 * @param source where it is known from
	 */
	record Known(@Nullable Long limit, Long remaining, @Nullable Instant reset, Source source) {

	}

}
