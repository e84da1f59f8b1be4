package dev.llmresilience.engine;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.gateway.LlmGateway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A deferred request survives the crash of the replica that holds it: a replica
 * in a child JVM queues a request and takes it off the stream, and is killed with SIGKILL before
 * its attempt; one of the two replicas left takes it over once the dead one's heartbeat is a
 * {@code replica-timeout} (3 s) old, completes it, and only that one publishes the event.
 */
class FleetCrashTests {

	@RegisterExtension
	final RedisFleet redis = new RedisFleet();

	private SwitchableProvider provider;

	private Process child;

	@BeforeEach
	void start() throws Exception {
		this.provider = new SwitchableProvider();
		this.provider.heal();
	}

	@AfterEach
	void stop() {
		if (this.child != null) {
			this.child.destroyForcibly();
		}
		this.provider.close();
	}

	@Test
	void deferredRequestOfAKilledReplicaCompletesOnceOnAnother() throws Exception {
		String[] survivor = { "llm.endpoints.primary.base-url=" + this.provider.baseUrl(),
				"llm.endpoints.primary.model=primary-model", "llm.gateway.deferral.delay=5s",
				"llm.gateway.deferral.max-attempts=5" };
		Replicas.run(List.of(this.redis.replica("a", survivor), this.redis.replica("b", survivor)), (replicas) -> {
			BlockingQueue<String> lines = new LinkedBlockingQueue<>();
			this.child = startChild(lines);
			String ticket = ticket(lines);
			// the child holds it: the group handed the message to the child's consumer
			await().atMost(Duration.ofSeconds(30)).until(() -> this.redis.commands()
				.xpending("llm:application:deferred", "llm-deferred")
				.getConsumerMessageCount()
				.getOrDefault("child", 0L) == 1L);
			this.child.destroyForcibly();
			assertThat(this.child.waitFor(10, TimeUnit.SECONDS)).isTrue();
			assertThat(this.child.exitValue()).as("killed by SIGKILL").isEqualTo(137);
			assertThat(this.provider.answers()).as("the child made no attempt").isZero();

			await().atMost(Duration.ofSeconds(20)).until(() -> FleetEvents.completed(replicas).size() == 1);
			await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
				.until(() -> FleetEvents.completed(replicas).size() == 1);
			assertThat(FleetEvents.completed(replicas).get(0).getTicket()).isEqualTo(ticket);
			assertThat(this.provider.answers()).isEqualTo(1);
			for (ApplicationContext replica : replicas) {
				DeferredResult result = replica.getBean(LlmGateway.class).deferred(ticket).block(Duration.ofSeconds(5));
				assertThat(result.state()).isEqualTo(DeferredResult.State.COMPLETED);
				assertThat(result.response().content()).isEqualTo("answer to survive me");
			}
		});
	}

	private Process startChild(BlockingQueue<String> lines) throws Exception {
		String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
		Process process = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
				DeferredReplicaProcess.class.getName(), String.valueOf(this.redis.port()), deadProvider(), "child", "5s")
			.redirectErrorStream(true)
			.start();
		Thread reader = new Thread(() -> {
			try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
				for (String line = in.readLine(); line != null; line = in.readLine()) {
					lines.add(line);
				}
			}
			catch (Exception ex) {
				// the child is gone
			}
		}, "child-output");
		reader.setDaemon(true);
		reader.start();
		return process;
	}

	private static String ticket(BlockingQueue<String> lines) throws InterruptedException {
		StringBuilder seen = new StringBuilder();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
		while (System.nanoTime() < deadline) {
			String line = lines.poll(1, TimeUnit.SECONDS);
			if (line != null && line.startsWith("TICKET ")) {
				assertThat(line).startsWith("TICKET DEFERRED dfr_");
				return line.substring("TICKET DEFERRED ".length());
			}
			if (line != null) {
				seen.append(line).append('\n');
			}
		}
		throw new AssertionError("The child replica printed no ticket; it said:\n" + seen);
	}

	/** A loopback port nothing listens on: connections are refused. */
	private static String deadProvider() throws Exception {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return "http://127.0.0.1:" + socket.getLocalPort() + "/v1";
		}
	}

}
