package dev.llmresilience.engine;

import java.time.Duration;
import java.util.function.Predicate;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;

class GatewayObservationTests {

	private static final Predicate<Observation.ContextView> IS_CALL = (parent) -> GatewayObservations.CALL
		.equals(parent.getName());

	private final FakeUpstream upstreams;

	private final ApplicationContextRunner contextRunner;

	GatewayObservationTests() throws Exception {
		this.upstreams = FakeUpstream.priced();
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
			.withBean(ObservationRegistry.class, TestObservationRegistry::create)
			.withPropertyValues(this.upstreams.properties());
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void oneObservationPerCallWithOneChildPerAttempt() {
		this.upstreams.primary().enqueue(Answers.errorEchoing(500, FakeUpstream.PRICED_KEY));
		this.upstreams.primary().enqueue(Answers.errorEchoing(500, FakeUpstream.PRICED_KEY));
		this.upstreams.primary().enqueue(Answers.errorEchoing(500, FakeUpstream.PRICED_KEY));
		this.upstreams.backup().enqueue(Answers.completion("small-test", "hi", 5, 2));
		this.contextRunner.run((context) -> {
			context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(10));
			TestObservationRegistry registry = (TestObservationRegistry) context.getBean(ObservationRegistry.class);
			assertThat(registry).hasNumberOfObservationsWithNameEqualTo(GatewayObservations.CALL, 1)
				.hasNumberOfObservationsWithNameEqualTo(GatewayObservations.ATTEMPT, 4)
				.forAllObservationsWithNameEqualTo(GatewayObservations.ATTEMPT,
						(attempt) -> attempt.hasLowCardinalityKeyValue("gen_ai.operation.name", "chat")
							.hasParentObservationContextMatching(IS_CALL))
				.hasObservationWithNameEqualTo(GatewayObservations.CALL)
				.that()
				.hasLowCardinalityKeyValue("llm.route", "default")
				.hasLowCardinalityKeyValue("llm.tier", "FALLBACK")
				.hasLowCardinalityKeyValue("llm.endpoint", "backup");
			assertThat(registry).hasAnObservation((observation) -> observation.hasNameEqualTo(GatewayObservations.ATTEMPT)
				.hasLowCardinalityKeyValue("llm.endpoint", "primary")
				.hasLowCardinalityKeyValue("error.type", "SERVER_ERROR"))
				.hasAnObservation((observation) -> observation.hasNameEqualTo(GatewayObservations.ATTEMPT)
					.hasLowCardinalityKeyValue("llm.endpoint", "backup")
					.hasLowCardinalityKeyValue("gen_ai.response.model", "small-test")
					.hasLowCardinalityKeyValue("error.type", "none"));
		});
	}

	@Test
	void anAttemptIsObservedWithTheConfiguredModelNotTheOneTheAnswerNames() {
		// a provider or proxy that names a new model in each answer would make a new series of the
		// timer derived from the observation each time
		this.upstreams.primary().enqueue(Answers.completion("gpt-test-made-up-7f3a", "hi", 5, 2));
		this.contextRunner.run((context) -> {
			ChatResponse answer = context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(10));
			org.assertj.core.api.Assertions.assertThat(answer.model()).isEqualTo("gpt-test-made-up-7f3a");
			TestObservationRegistry registry = (TestObservationRegistry) context.getBean(ObservationRegistry.class);
			assertThat(registry).hasObservationWithNameEqualTo(GatewayObservations.ATTEMPT)
				.that()
				.hasLowCardinalityKeyValue("gen_ai.response.model", "gpt-test");
		});
	}

}
