package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.BalanceSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.engine.BalancedUpstreams.balancing;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code order: cheapest-first} over real local servers: the route is tried by price (input plus
 * output per million tokens), whatever order it is listed in; unpriced endpoints come last.
 */
@ExtendWith(OutputCaptureExtension.class)
class CheapestFirstTests {

	private static final String[] PRICES = { "llm.endpoints.premium.price.input-per-million=10",
			"llm.endpoints.premium.price.output-per-million=30", "llm.endpoints.mid.price.input-per-million=3",
			"llm.endpoints.mid.price.output-per-million=15", "llm.endpoints.cheap.price.input-per-million=0.15",
			"llm.endpoints.cheap.price.output-per-million=0.6" };

	private final BalancedUpstreams upstreams = new BalancedUpstreams("premium", "local", "mid", "cheap");

	@AfterEach
	void close() {
		this.upstreams.close();
	}

	@Test
	void theCheapestAnswersAndFailuresWalkUpThePricesWithTheUnpricedLast(CapturedOutput output) {
		this.upstreams.runner(PRICES)
			.withPropertyValues("llm.routes.default.endpoints=premium,local,mid,cheap",
					"llm.routes.default.order=cheapest-first")
			.run((context) -> {
				assertThat(output).contains("Route 'default' is ordered cheapest-first, but endpoint 'local' has no price")
					.contains("llm.endpoints.local.price.input-per-million");
				ChatResponse cheapest = chat(context);
				assertThat(cheapest.endpoint()).isEqualTo("cheap");
				assertThat(cheapest.tier()).isEqualTo(Tier.PRIMARY);

				this.upstreams.get("cheap").failWith(500);
				this.upstreams.get("mid").failWith(502);
				this.upstreams.get("premium").failWith(503);
				ChatResponse last = chat(context);
				assertThat(last.attempts()).extracting(Attempt::endpoint).containsExactly("cheap", "mid", "premium", "local");
				assertThat(last.endpoint()).isEqualTo("local");
				assertThat(last.tier()).isEqualTo(Tier.FALLBACK);

				this.upstreams.get("premium").failWith(200);
				assertThat(chat(context).attempts()).extracting(Attempt::endpoint).containsExactly("cheap", "mid", "premium");

				RouteBalanceDescriptor route = balancing(context, "default");
				assertThat(route.order()).isEqualTo("cheapest-first");
				assertThat(route.balance()).isEqualTo("priority");
				assertThat(route.endpoints()).containsOnlyKeys("cheap", "mid", "premium", "local");
				assertThat(route.endpoints().keySet()).containsExactly("cheap", "mid", "premium", "local");
				assertThat(route.endpoints().get("cheap").chosen()).isEqualTo(3);
			});
	}

	@Test
	void endpointsOfEqualPriceShareTheLoadWithABalance() {
		this.upstreams.runner(PRICES)
			.withPropertyValues("llm.endpoints.local.price.input-per-million=0.1",
					"llm.endpoints.local.price.output-per-million=0.65", "llm.routes.default.endpoints=premium,local,mid,cheap",
					"llm.routes.default.order=cheapest-first", "llm.routes.default.balance=weighted")
			.withBean(BalanceSource.class, () -> BalanceSource.seeded(9, System::nanoTime))
			.run((context) -> {
				for (int i = 0; i < 40; i++) {
					ChatResponse response = chat(context);
					assertThat(response.endpoint()).isIn("local", "cheap");
					assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
				}
				assertThat(this.upstreams.get("local").requests()).isBetween(10L, 30L);
				assertThat(this.upstreams.get("cheap").requests()).isBetween(10L, 30L);
				assertThat(this.upstreams.get("mid").requests() + this.upstreams.get("premium").requests()).isZero();
			});
	}

	private static ChatResponse chat(ApplicationContext context) {
		return context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(20));
	}

}
