package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.FallbackCache;
import dev.llmresilience.spi.FallbackCache.CachedAnswer;
import dev.llmresilience.spi.RouteSelector;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.MutableClock;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cache.Cache;
import org.springframework.cache.CacheManager;
import org.springframework.cache.concurrent.ConcurrentMapCache;
import org.springframework.cache.concurrent.ConcurrentMapCacheManager;
import org.springframework.cache.support.SimpleCacheManager;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.error;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The last-good-answer cache: off by default; when on, the answer to the same
 * route, messages and parameters given earlier is returned with tier CACHED and its age once every
 * live endpoint fails. Ages and time to live are measured on a {@link MutableClock}, with the
 * gateway built around the auto-configured endpoints where the auto-configuration would use the
 * system clock.
 */
class FallbackCacheTests {

	private static final ChatRequest QUESTION = ChatRequest.builder()
		.system("Answer briefly.")
		.user("What is the capital of France?")
		.temperature(0.2)
		.maxTokens(50)
		.extra("top_p", 0.9)
		.build();

	private final MutableClock clock = MutableClock.at("2026-03-01T12:00:00Z");

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	private ApplicationContextRunner runner() {
		return this.upstreams.runner()
			.withPropertyValues("llm.defaults.retry.max-attempts=1", "llm.endpoints.primary.price.input-per-million=2.5",
					"llm.endpoints.primary.price.output-per-million=10");
	}

	private void everyEndpointFails(int times) {
		for (int i = 0; i < times; i++) {
			this.upstreams.primary().enqueue(error(503, "overloaded"));
			this.upstreams.backup().enqueue(error(503, "overloaded"));
		}
	}

	@Test
	void cacheIsOffByDefault() {
		this.upstreams.primary().enqueue(completion("Paris."));
		everyEndpointFails(1);
		runner().run((context) -> {
			assertThat(context).doesNotHaveBean(FallbackCache.class);
			assertThat(chat(context, QUESTION).tier()).isEqualTo(Tier.PRIMARY);
			assertThat(chat(context, QUESTION).tier()).isEqualTo(Tier.BUSY);
		});
	}

	@Test
	void earlierAnswerIsReturnedWithItsAgeAndNoCostWhenEveryEndpointFails() {
		this.upstreams.primary().enqueue(completion("Paris."));
		everyEndpointFails(1);
		runner().run((context) -> {
			LlmGateway gateway = gateway(context, Duration.ofHours(1));
			ChatResponse live = gateway.chat(QUESTION).block();
			assertThat(live.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(live.cost()).isNotNull();

			this.clock.advance(Duration.ofSeconds(90));
			ChatResponse cached = gateway.chat(QUESTION).block();
			assertThat(cached.tier()).isEqualTo(Tier.CACHED);
			assertThat(cached.isDegraded()).isTrue();
			assertThat(cached.content()).isEqualTo("Paris.");
			assertThat(cached.endpoint()).isEqualTo("primary");
			assertThat(cached.age()).isEqualTo(Duration.ofSeconds(90));
			assertThat(cached.cost()).isNull();
			assertThat(cached.usage()).isEqualTo(live.usage());
			assertThat(cached.ticket()).isNull();
			assertThat(cached.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.SERVER_ERROR, Outcome.SERVER_ERROR);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
		});
	}

	@Test
	void sameMessagesWithOtherParametersOrOnAnotherRouteAreNotServedFromTheCache() {
		this.upstreams.primary().enqueue(completion("Paris."));
		everyEndpointFails(5);
		runner().withPropertyValues("llm.routes.other=primary,backup").run((context) -> {
			LlmGateway gateway = gateway(context, Duration.ofHours(1));
			assertThat(gateway.chat(QUESTION).block().tier()).isEqualTo(Tier.PRIMARY);
			List<ChatRequest> others = List.of(QUESTION.toBuilder().temperature(0.7).build(),
					QUESTION.toBuilder().maxTokens(51).build(), QUESTION.toBuilder().extra("top_p", 0.5).build(),
					QUESTION.toBuilder().route("other").build(),
					ChatRequest.builder().user("What is the capital of France?").temperature(0.2).maxTokens(50)
						.extra("top_p", 0.9).build());
			for (ChatRequest other : others) {
				assertThat(gateway.chat(other).block().tier()).as(other.toString()).isEqualTo(Tier.BUSY);
			}
		});
	}

	@Test
	void requestThatDiffersOnlyInHowItMayWaitIsTheSameQuestion() {
		this.upstreams.primary().enqueue(completion("Paris."));
		everyEndpointFails(1);
		runner().run((context) -> {
			LlmGateway gateway = gateway(context, Duration.ofHours(1));
			gateway.chat(QUESTION).block();
			ChatRequest same = QUESTION.toBuilder()
				.deferrable(true)
				.timeout(Duration.ofSeconds(20))
				.deadline(Duration.ofSeconds(30))
				.build();
			assertThat(gateway.chat(same).block().tier()).isEqualTo(Tier.CACHED);
		});
	}

	@Test
	void answerOlderThanTheTimeToLiveIsNotServed() {
		this.upstreams.primary().enqueue(completion("Paris."));
		everyEndpointFails(2);
		runner().run((context) -> {
			LlmGateway gateway = gateway(context, Duration.ofMinutes(10));
			gateway.chat(QUESTION).block();
			this.clock.advance(Duration.ofMinutes(10));
			ChatResponse atTtl = gateway.chat(QUESTION).block();
			assertThat(atTtl.tier()).isEqualTo(Tier.CACHED);
			assertThat(atTtl.age()).isEqualTo(Duration.ofMinutes(10));
			this.clock.advance(Duration.ofSeconds(1));
			assertThat(gateway.chat(QUESTION).block().tier()).isEqualTo(Tier.BUSY);
		});
	}

	@Test
	void cachedAnswerComesBeforeDeferral() {
		this.upstreams.primary().enqueue(completion("Paris."));
		everyEndpointFails(1);
		runner().withPropertyValues("llm.gateway.fallback-cache.enabled=true").run((context) -> {
			chat(context, QUESTION);
			ChatResponse answer = chat(context, QUESTION.toBuilder().deferrable(true).build());
			assertThat(answer.tier()).isEqualTo(Tier.CACHED);
			assertThat(answer.ticket()).isNull();
		});
	}

	@Test
	void enabledCacheWithoutACacheManagerServesFromMemory() {
		this.upstreams.primary().enqueue(completion("Paris."));
		everyEndpointFails(1);
		runner().withPropertyValues("llm.gateway.fallback-cache.enabled=true").run((context) -> {
			assertThat(context).hasSingleBean(CaffeineFallbackCache.class);
			chat(context, QUESTION);
			ChatResponse cached = chat(context, QUESTION);
			assertThat(cached.tier()).isEqualTo(Tier.CACHED);
			assertThat(cached.content()).isEqualTo("Paris.");
			assertThat(cached.age()).isBetween(Duration.ZERO, Duration.ofSeconds(20));
		});
	}

	@Test
	void applicationCacheManagerHoldsTheAnswers() {
		this.upstreams.primary().enqueue(completion("Paris."));
		everyEndpointFails(1);
		runner().withPropertyValues("llm.gateway.fallback-cache.enabled=true")
			.withBean(CacheManager.class, () -> new ConcurrentMapCacheManager("llm-fallback"))
			.run((context) -> {
				chat(context, QUESTION);
				Cache cache = context.getBean(CacheManager.class).getCache("llm-fallback");
				CachedAnswer entry = cache.get(RequestKeys.of("default", QUESTION), CachedAnswer.class);
				assertThat(entry).isNotNull();
				assertThat(entry.response().content()).isEqualTo("Paris.");
				ChatResponse cached = chat(context, QUESTION);
				assertThat(cached.tier()).isEqualTo(Tier.CACHED);
				assertThat(cached.content()).isEqualTo("Paris.");
			});
	}

	@Test
	void cacheNameChoosesTheApplicationsCache() {
		this.upstreams.primary().enqueue(completion("Paris."));
		runner().withPropertyValues("llm.gateway.fallback-cache.enabled=true", "llm.gateway.fallback-cache.cache-name=answers")
			.withBean(CacheManager.class, () -> new ConcurrentMapCacheManager("answers"))
			.run((context) -> {
				chat(context, QUESTION);
				Cache cache = context.getBean(CacheManager.class).getCache("answers");
				assertThat(cache.get(RequestKeys.of("default", QUESTION), CachedAnswer.class)).isNotNull();
			});
	}

	@Test
	void cacheNameTheCacheManagerDoesNotHaveFailsTheStartup() {
		runner().withPropertyValues("llm.gateway.fallback-cache.enabled=true")
			.withBean(CacheManager.class, () -> new ConcurrentMapCacheManager("something-else"))
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.isInstanceOf(LlmConfigurationException.class)
					.hasMessageContaining("llm.gateway.fallback-cache.cache-name")
					.hasMessageContaining("'llm-fallback'");
				LlmConfigurationException failure = (LlmConfigurationException) rootCause(context.getStartupFailure());
				assertThat(failure.getProperty()).isEqualTo("llm.gateway.fallback-cache.cache-name");
			});
	}

	@Test
	void cacheThatStoresByValueKeepsACopyOfTheAnswer() {
		this.upstreams.primary().enqueue(completion("Paris."));
		everyEndpointFails(1);
		runner().withPropertyValues("llm.gateway.fallback-cache.enabled=true").withBean(CacheManager.class, () -> {
			ConcurrentMapCacheManager manager = new ConcurrentMapCacheManager("llm-fallback");
			manager.setStoreByValue(true);
			return manager;
		}).run((context) -> {
			assertThat(chat(context, QUESTION).tier()).isEqualTo(Tier.PRIMARY);
			ChatResponse cached = chat(context, QUESTION);
			assertThat(cached.tier()).isEqualTo(Tier.CACHED);
			assertThat(cached.content()).isEqualTo("Paris.");
		});
	}

	@Test
	void cacheThatIsDownNeitherSpoilsALiveAnswerNorTheDegradation() {
		this.upstreams.primary().enqueue(completion("Paris."));
		everyEndpointFails(1);
		runner().withPropertyValues("llm.gateway.fallback-cache.enabled=true").withBean(CacheManager.class, () -> {
			SimpleCacheManager manager = new SimpleCacheManager();
			manager.setCaches(List.of(new Unavailable("llm-fallback")));
			return manager;
		}).run((context) -> {
			ChatResponse live = chat(context, QUESTION);
			assertThat(live.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(live.content()).isEqualTo("Paris.");
			ChatResponse deferred = chat(context, QUESTION.toBuilder().deferrable(true).build());
			assertThat(deferred.tier()).isEqualTo(Tier.DEFERRED);
		});
	}

	private LlmGateway gateway(ApplicationContext context, Duration ttl) {
		FallbackCache cache = new CaffeineFallbackCache(100, ttl, this.clock);
		Degradation degradation = new Degradation(RouteSelector.DEFAULT, cache, null, CallVolumeGuard.off(),
				BudgetGuard.off(this.clock), this.clock);
		return new DefaultLlmGateway(context.getBean(EndpointRegistry.class), GatewaySettings.of(Duration.ofSeconds(90)),
				degradation, List.of(), ObservationRegistry.NOOP);
	}

	private static Throwable rootCause(Throwable error) {
		Throwable cause = error;
		while (cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	/** A cache whose store cannot be reached, as a remote cache during an outage. */
	static final class Unavailable extends ConcurrentMapCache {

		Unavailable(String name) {
			super(name);
		}

		@Override
		public void put(Object key, Object value) {
			throw new IllegalStateException("cache store unreachable");
		}

		@Override
		public ValueWrapper get(Object key) {
			throw new IllegalStateException("cache store unreachable");
		}

		@Override
		public <T> T get(Object key, Class<T> type) {
			throw new IllegalStateException("cache store unreachable");
		}

		@Override
		public <T> T get(Object key, Callable<T> valueLoader) {
			throw new IllegalStateException("cache store unreachable");
		}

	}

}
