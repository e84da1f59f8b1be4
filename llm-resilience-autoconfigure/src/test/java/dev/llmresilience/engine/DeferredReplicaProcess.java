package dev.llmresilience.engine;

import java.util.concurrent.CountDownLatch;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.gateway.LlmGateway;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/**
 * A replica in a JVM of its own, for {@link FleetCrashTests}: it queues one deferrable request
 * that its provider cannot answer, prints {@code TICKET <tier> <ticket>}, and waits to be killed.
 * Arguments: the Redis port, the provider's base URL, the replica's name, the deferral delay.
 */
public final class DeferredReplicaProcess {

	private DeferredReplicaProcess() {
	}

	public static void main(String[] args) throws InterruptedException {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(Replica.class)
			.web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.properties("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + args[0],
					"llm.endpoints.primary.base-url=" + args[1], "llm.endpoints.primary.model=primary-model",
					"llm.shared-state.type=redis", "llm.shared-state.replica-name=" + args[2],
					"llm.shared-state.heartbeat=100ms", "llm.shared-state.replica-timeout=3s",
					"llm.defaults.retry.max-attempts=1", "llm.gateway.deferral.delay=" + args[3],
					"llm.gateway.deferral.max-attempts=5")
			// over the test resources' spring.main.web-application-type: this replica has no web server
			.run("--spring.main.web-application-type=none");
		ChatResponse answer = context.getBean(LlmGateway.class)
			.chat(ChatRequest.builder().user("survive me").deferrable(true).build())
			.block();
		System.out.println("TICKET " + answer.tier() + " " + answer.ticket());
		System.out.flush();
		new CountDownLatch(1).await();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DataRedisReactiveAutoConfiguration.class,
			LlmAutoConfiguration.class })
	static class Replica {

	}

}
