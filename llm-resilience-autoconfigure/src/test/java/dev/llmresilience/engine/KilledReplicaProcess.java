package dev.llmresilience.engine;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.DeferredRequestFailedEvent;
import dev.llmresilience.gateway.LlmGateway;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

/**
 * A replica in a JVM of its own, for {@link FleetKillTests}, made to be killed: it warms its JVM
 * first (a context of its own without Redis makes one call and closes), prints {@code READY}, and
 * waits for {@code GO <replica> <prompt>} on its standard input; then it joins the fleet on Redis,
 * defers that prompt (its provider fails the first call), prints {@code TICKET <tier> <ticket>},
 * and prints {@code COMPLETED <ticket> <content>} (or {@code FAILED <ticket>}) if its own end of a
 * request counts. Arguments: the Redis port, the provider's base URL for warming, the provider's
 * base URL, the key prefix.
 */
public final class KilledReplicaProcess {

	private KilledReplicaProcess() {
	}

	public static void main(String[] args) throws Exception {
		String[] common = { "llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1",
				"llm.gateway.deferral.delay=200ms", "llm.gateway.deferral.max-attempts=5" };
		// a fleet of its own under another prefix: Lettuce's and the store's classes are loaded and
		// compiled before the run, and the test's fleet does not see this replica until it goes
		try (ConfigurableApplicationContext warm = context(common, "llm.endpoints.primary.base-url=" + args[1],
				"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + args[0], "llm.shared-state.type=redis",
				"llm.shared-state.key-prefix=" + args[3] + "warm:" + ProcessHandle.current().pid() + ":",
				"llm.shared-state.heartbeat=100ms", "llm.shared-state.replica-timeout=1s")) {
			warm.getBean(LlmGateway.class).chat(ChatRequest.builder().user("warm").build()).block();
		}
		System.out.println("READY");
		System.out.flush();
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String line = in.readLine();
		if (line == null || line.equals("EXIT")) {
			// a normal exit: the JVM archives the classes it loaded, for the children after it
			System.exit(0);
		}
		String[] go = line.split(" ");
		ConfigurableApplicationContext context = context(common, "llm.endpoints.primary.base-url=" + args[2],
				"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + args[0], "llm.shared-state.type=redis",
				"llm.shared-state.key-prefix=" + args[3], "llm.shared-state.replica-name=" + go[1],
				"llm.shared-state.heartbeat=100ms", "llm.shared-state.replica-timeout=1s");
		ChatResponse answer = context.getBean(LlmGateway.class)
			.chat(ChatRequest.builder().user(go[2]).deferrable(true).build())
			.block();
		System.out.println("TICKET " + answer.tier() + " " + answer.ticket());
		System.out.flush();
		new CountDownLatch(1).await();
	}

	private static ConfigurableApplicationContext context(String[] common, String... properties) {
		return new SpringApplicationBuilder(Replica.class).web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.properties(common)
			.properties(properties)
			// over the test resources' spring.main.web-application-type: this replica has no web server
			.run("--spring.main.web-application-type=none");
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DataRedisReactiveAutoConfiguration.class,
			LlmAutoConfiguration.class })
	static class Replica {

		@EventListener
		void completed(DeferredRequestCompletedEvent event) {
			// the event is the test's to count: it is printed (and flushed) the moment it is published
			System.out.println("COMPLETED " + event.getTicket() + " " + event.getResponse().content());
			System.out.flush();
		}

		@EventListener
		void failed(DeferredRequestFailedEvent event) {
			System.out.println("FAILED " + event.getTicket());
			System.out.flush();
		}

	}

}
