package dev.llmresilience.sample;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.util.TestSocketUtils;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * What the sample lets a stranger do: nothing from another machine (it listens on loopback), and
 * on loopback no request to the simulator can grow its memory or break its streams, and no prompt
 * is taken past a bounded length.
 */
@SpringBootTest(webEnvironment = WebEnvironment.DEFINED_PORT)
@AutoConfigureWebTestClient
class SampleSecurityTests {

	private static final int PORT = TestSocketUtils.findAvailableTcpPort();

	// far above the client's 5 s default: on a loaded machine the sample's first answers come late,
	// and a time-out would fail a test before it could tell whether the guarantee holds
	private static final Duration PATIENCE = Duration.ofMinutes(2);

	@DynamicPropertySource
	static void port(DynamicPropertyRegistry registry) {
		registry.add("server.port", () -> PORT);
	}

	@Autowired
	private WebTestClient client;

	@BeforeEach
	void configuredProvidersAreKnown() {
		this.client = this.client.mutate().responseTimeout(PATIENCE).build();
		mode("primary", Map.of("mode", "ok")).expectStatus().isOk();
		mode("backup", Map.of("mode", "ok")).expectStatus().isOk();
	}

	@Test
	void listensOnLoopbackOnly() throws IOException {
		Optional<InetAddress> external = nonLoopbackAddress();
		assumeThat(external).as("a non-loopback address of this machine").isPresent();
		try (Socket socket = new Socket()) {
			assertThatExceptionOfType(IOException.class)
				.isThrownBy(() -> socket.connect(new InetSocketAddress(external.get(), PORT), (int) PATIENCE.toMillis()));
		}
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), PORT), (int) PATIENCE.toMillis());
			assertThat(socket.isConnected()).isTrue();
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "-1", "1001", "two", "2.5" })
	void streamCutOutsideItsRangeIsRefusedAndTheModeKept(String after) {
		mode("primary", Map.of("mode", "stream-cut", "after", after)).expectStatus().isBadRequest();
		this.client.get().uri("/sim/primary/mode").exchange().expectStatus().isOk().expectBody()
			.jsonPath("$.mode").isEqualTo("ok")
			.jsonPath("$.after").isEqualTo(3);
	}

	@Test
	void providerNamesAreCheckedAndTheirNumberIsBounded() {
		mode("not a name", Map.of("mode", "ok")).expectStatus().isBadRequest();
		mode("x".repeat(33), Map.of("mode", "ok")).expectStatus().isBadRequest();
		int accepted = 0;
		for (int i = 0; i < 40; i++) {
			if (mode("extra-" + i, Map.of("mode", "error")).returnResult(String.class).getStatus().is2xxSuccessful()) {
				accepted++;
			}
		}
		// primary and backup are known already, and other endpoints of the sample may be
		assertThat(accepted).isPositive().isLessThanOrEqualTo(SimulatedModes.MAX_PROVIDERS - 2);
		this.client.get().uri("/sim/extra-39/mode").exchange().expectStatus().isBadRequest();
		this.client.post()
			.uri("/sim/extra-39/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("model", "m", "messages", java.util.List.of(Map.of("role", "user", "content", "hi"))))
			.exchange()
			.expectStatus()
			.isBadRequest();
		mode("primary", Map.of("mode", "ok")).expectStatus().isOk();
	}

	@Test
	void overlongPromptIsABadRequest() {
		this.client.post()
			.uri("/api/chat")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("prompt", "x".repeat(ChatController.PromptRequest.MAX_PROMPT + 1)))
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.message")
			.value((message) -> assertThat((String) message).contains("longer than"));
	}

	private WebTestClient.ResponseSpec mode(String provider, Map<String, Object> mode) {
		return this.client.post()
			.uri("/sim/{provider}/mode", provider)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(mode)
			.exchange();
	}

	private static Optional<InetAddress> nonLoopbackAddress() throws SocketException {
		for (NetworkInterface network : Collections.list(NetworkInterface.getNetworkInterfaces())) {
			if (network.isUp() && !network.isLoopback()) {
				for (InetAddress address : Collections.list(network.getInetAddresses())) {
					if (address instanceof Inet4Address) {
						return Optional.of(address);
					}
				}
			}
		}
		return Optional.empty();
	}

}
