package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.spi.DeferredStore;
import dev.llmresilience.spi.DeferredStore.DeferredEntry;
import dev.llmresilience.spi.FallbackCache;
import dev.llmresilience.spi.FallbackCache.CachedAnswer;
import dev.llmresilience.spi.RouteSelector;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.FakeUpstream.chat;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The degradation's auto-configuration: its defaults and properties, the beans a user may
 * replace, the start-up failures of bad values, and what {@code /actuator/llmbreakers} and the
 * meters show of it.
 */
class DegradationConfigurationTests {

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
		return this.upstreams.withActuator();
	}

	@Test
	void defaultsAreTheDocumentedOnes() {
		runner().run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(FallbackCache.class);
			assertThat(context.getBean(RouteSelector.class)).isSameAs(RouteSelector.DEFAULT);
			assertThat(context.getBean(CallVolumeGuard.class).maxCalls()).isZero();
			assertThat(context.getBean(BudgetGuard.class).maxCostPerDay()).isZero();
			assertThat(context.getBean(DeferredStore.class)).isInstanceOf(InMemoryDeferredStore.class);
			assertThat(context.getBean(DeferredQueue.class).capacity()).isEqualTo(1000);
		});
	}

	@Test
	void propertiesConfigureTheGuardsAndTheQueue() {
		runner().withPropertyValues("llm.gateway.guard.max-calls-per-hour=500", "llm.gateway.budget.max-cost-per-day=12.50",
				"llm.gateway.deferral.capacity=7")
			.run((context) -> {
				assertThat(context.getBean(CallVolumeGuard.class).maxCalls()).isEqualTo(500);
				assertThat(context.getBean(BudgetGuard.class).maxCostPerDay()).isEqualByComparingTo("12.5");
				assertThat(context.getBean(DeferredQueue.class).capacity()).isEqualTo(7);
			});
	}

	@Test
	void reportShowsTheDeferredQueueTheGuardAndTheBudgetAsJson() {
		runner().withPropertyValues("llm.gateway.guard.max-calls-per-hour=500", "llm.gateway.budget.max-cost-per-day=12.5",
				"llm.gateway.deferral.capacity=7")
			.run((context) -> {
				forceOpen(context);
				assertThat(chat(context, deferrable()).tier()).isEqualTo(Tier.DEFERRED);
				JsonNode report = JsonMapper.builder()
					.build()
					.valueToTree(context.getBean(LlmBreakersEndpoint.class).breakers());
				assertThat(report.get("deferred").get("pending").asInt()).isOne();
				assertThat(report.get("deferred").get("capacity").asInt()).isEqualTo(7);
				assertThat(report.get("deferred").get("notDurable").asInt()).as("in memory: held here only").isOne();
				assertThat(report.get("guard").get("maxCallsPerHour").asInt()).isEqualTo(500);
				assertThat(report.get("guard").get("callsThisHour").asInt()).isZero();
				assertThat(report.get("guard").get("tripped").asBoolean()).isFalse();
				assertThat(report.get("budget").get("maxCostPerDay").decimalValue()).isEqualByComparingTo("12.5");
				assertThat(report.get("budget").get("spentToday").decimalValue()).isEqualByComparingTo("0");
				assertThat(report.get("budget").get("tripped").asBoolean()).isFalse();
				assertThat(report.get("endpoints").get("primary").get("state").asString()).isEqualTo("FORCED_OPEN");
			});
	}

	@Test
	void pendingDeferredRequestsAreMetered() {
		runner().run((context) -> {
			forceOpen(context);
			chat(context, deferrable());
			chat(context, deferrable());
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("llm.gateway.deferred.pending").gauge().value()).isEqualTo(2);
			assertThat(meters.get("llm.gateway.deferred.completed").functionCounter().count()).isZero();
			assertThat(meters.get("llm.gateway.deferred.failed").functionCounter().count()).isZero();
		});
	}

	@Test
	void withDeferralOffTheReportShowsAnEmptyQueueOfNoCapacity() {
		runner().withPropertyValues("llm.gateway.deferral.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(DeferredQueue.class).doesNotHaveBean(DeferredStore.class);
			assertThat(context.getBean(LlmBreakersEndpoint.class).breakers().deferred())
				.isEqualTo(new LlmBreakersEndpoint.DeferredDescriptor(0, 0, 0));
		});
	}

	@Test
	void applicationDeferredStoreKeepsTheDeferredRequests() {
		RecordingStore store = new RecordingStore();
		runner().withBean(DeferredStore.class, () -> store).run((context) -> {
			forceOpen(context);
			String ticket = chat(context, deferrable()).ticket();
			assertThat(store.find(ticket)).isPresent();
			assertThat(store.saved).extracting(DeferredEntry::ticket).containsExactly(ticket);
		});
	}

	@Test
	void applicationFallbackCacheIsUsedWithoutEnablingTheBuiltInOne() {
		FallbackCache cache = new FallbackCache() {

			@Override
			public void put(String key, ChatResponse response) {
			}

			@Override
			public Optional<CachedAnswer> get(String key) {
				return Optional.of(new CachedAnswer(ChatResponse.builder()
					.content("from the application's cache")
					.endpoint("primary")
					.model("m")
					.finishReason("stop")
					.build(), Clock.systemUTC().instant()));
			}

		};
		runner().withBean(FallbackCache.class, () -> cache).run((context) -> {
			forceOpen(context);
			ChatResponse response = chat(context, ChatRequest.ofUser("hello"));
			assertThat(response.tier()).isEqualTo(Tier.CACHED);
			assertThat(response.content()).isEqualTo("from the application's cache");
		});
	}

	@Test
	void applicationGuardsReplaceTheConfiguredOnes() {
		CallVolumeGuard guard = new CallVolumeGuard(42, Duration.ofHours(1));
		BudgetGuard budget = new BudgetGuard(BigDecimal.TEN, Clock.systemUTC(), ZoneOffset.UTC);
		runner().withPropertyValues("llm.gateway.guard.max-calls-per-hour=500")
			.withBean(CallVolumeGuard.class, () -> guard)
			.withBean(BudgetGuard.class, () -> budget)
			.run((context) -> {
				assertThat(context.getBean(CallVolumeGuard.class)).isSameAs(guard);
				assertThat(context.getBean(BudgetGuard.class)).isSameAs(budget);
				assertThat(context.getBean(LlmBreakersEndpoint.class).breakers().guard().maxCallsPerHour()).isEqualTo(42);
			});
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = {
			"llm.gateway.guard.max-calls-per-hour=-1 | llm.gateway.guard.max-calls-per-hour",
			"llm.gateway.budget.max-cost-per-day=-0.01 | llm.gateway.budget.max-cost-per-day",
			"llm.gateway.deferral.delay=0s | llm.gateway.deferral.delay",
			"llm.gateway.deferral.max-attempts=0 | llm.gateway.deferral.max-attempts",
			"llm.gateway.deferral.capacity=0 | llm.gateway.deferral.capacity",
			"llm.gateway.deferral.retention=0s | llm.gateway.deferral.retention",
			"llm.gateway.fallback-cache.ttl=0s | llm.gateway.fallback-cache.ttl",
			"llm.gateway.fallback-cache.max-entries=0 | llm.gateway.fallback-cache.max-entries" })
	void badValueFailsTheStartNamingItsProperty(String setting, String property) {
		runner().withPropertyValues(setting, "llm.gateway.fallback-cache.enabled=true").run((context) -> {
			assertThat(context).hasFailed();
			Throwable cause = context.getStartupFailure();
			while (cause.getCause() != null) {
				cause = cause.getCause();
			}
			assertThat(cause).isInstanceOf(LlmConfigurationException.class);
			assertThat(((LlmConfigurationException) cause).getProperty()).isEqualTo(property);
		});
	}

	private static ChatRequest deferrable() {
		return ChatRequest.builder().user("nightly report").deferrable(true).build();
	}

	private static void forceOpen(ApplicationContext context) {
		endpoint(context, "primary").circuitBreaker().transitionToForcedOpenState();
		endpoint(context, "backup").circuitBreaker().transitionToForcedOpenState();
	}

	/** An application's store: the in-memory one, recording what the queue saves. */
	static final class RecordingStore implements DeferredStore {

		private final InMemoryDeferredStore delegate = new InMemoryDeferredStore(Duration.ofHours(1), Clock.systemUTC());

		private final List<DeferredEntry> saved = new CopyOnWriteArrayList<>();

		@Override
		public void save(DeferredEntry entry) {
			this.saved.add(entry);
			this.delegate.save(entry);
		}

		@Override
		public Optional<DeferredEntry> find(String ticket) {
			return this.delegate.find(ticket);
		}

		@Override
		public List<DeferredEntry> pending() {
			return this.delegate.pending();
		}

	}

}
