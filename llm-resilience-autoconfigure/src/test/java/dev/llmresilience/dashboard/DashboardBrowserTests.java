package dev.llmresilience.dashboard;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.error;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The dashboard in a real browser: headless Chromium opens {@code /llm/dashboard} of a running
 * WebFlux and a running Servlet application, and what the page shows is read from its DOM, before
 * and after the primary's breaker opens, without reloading the page (it refreshes itself from
 * {@code /actuator/llmbreakers}). Skipped, saying so, on a machine without Chromium: install
 * Debian's {@code chromium} package (which {@code .ci/run} does when it runs as root) or set
 * {@code CHROMIUM} to a Chrome or Chromium binary.
 */
class DashboardBrowserTests {

	private static final Optional<Path> CHROMIUM = HeadlessChromium.find();

	private static final String PRIMARY_STATE = "document.querySelector('tr[data-endpoint=\"primary\"] .state')?.dataset.state ?? null";

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		assumeTrue(CHROMIUM.isPresent(), "No Chromium on this machine, so the dashboard's browser test is skipped: "
				+ "install Debian's chromium package (apt-get install -y chromium) or set CHROMIUM=/path/to/chromium");
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		if (this.upstreams != null) {
			this.upstreams.close();
		}
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "REACTIVE", "SERVLET" })
	void pageShowsTheBreakersAndFollowsThePrimaryOpening(WebApplicationType type) throws Exception {
		try (ConfigurableApplicationContext app = DashboardApplications.start(type, this.upstreams,
				"--llm.dashboard.enabled=true", "--llm.dashboard.refresh=500ms", "--llm.endpoints.primary.retry.max-attempts=1",
				"--llm.endpoints.primary.circuit-breaker.sliding-window-size=2");
				HeadlessChromium browser = HeadlessChromium.open(CHROMIUM.get(),
						"http://localhost:" + DashboardApplications.port(app) + "/llm/dashboard")) {
			awaitPage(browser, PRIMARY_STATE, "CLOSED");
			assertThat(browser.evaluate("document.querySelector('tr[data-endpoint=\"backup\"] .state').dataset.state"))
				.isEqualTo("CLOSED");
			assertThat(browser.evaluate("document.querySelector('tr[data-route=\"default\"] td:nth-child(2)').textContent"))
				.isEqualTo("primary \u2192 backup");
			assertThat(browser.evaluate("document.querySelector('tr[data-route=\"default\"] .share').textContent"))
				.isEqualTo("no answers");
			assertThat(browser.evaluate("document.getElementById('status').textContent")).isEqualTo("2 endpoints, 0 open");
			String refreshes = browser.evaluate("document.body.dataset.refreshes");

			LlmGateway gateway = app.getBean(LlmGateway.class);
			for (int i = 0; i < 2; i++) {
				this.upstreams.primary().enqueue(error(500, "server_error"));
				this.upstreams.backup().enqueue(completion("from the backup"));
				assertThat(gateway.chat("hello").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.FALLBACK);
			}

			awaitPage(browser, PRIMARY_STATE, "OPEN");
			assertThat(Integer.parseInt(browser.evaluate("document.body.dataset.refreshes")))
				.as("the page refreshed itself, it was not reloaded")
				.isGreaterThan(Integer.parseInt(refreshes));
			assertThat(browser.evaluate("document.querySelector('tr[data-endpoint=\"primary\"] .failure-rate').textContent"))
				.isEqualTo("100.0 % / 50 %");
			assertThat(browser.evaluate("document.getElementById('status').textContent")).isEqualTo("2 endpoints, 1 open");
			assertThat(browser.evaluate("document.querySelector('#transitions li[data-endpoint=\"primary\"]').textContent"))
				.contains("primary: CLOSED \u2192 OPEN (failure rate 100.0 % over 2 calls)");
			assertThat(browser.evaluate("document.querySelector('tr[data-route=\"default\"] .share').dataset.share"))
				.isEqualTo("1");
			assertThat(browser.evaluate("document.querySelector('tr[data-route=\"default\"] .share').textContent"))
				.isEqualTo("100 %");
			assertThat(browser.evaluate("document.getElementById('error').hidden")).isEqualTo("true");
		}
	}

	private static void awaitPage(HeadlessChromium browser, String expression, String expected) {
		try {
			await(expression).atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(200))
				.until(() -> expected.equals(browser.evaluate(expression)));
		}
		catch (RuntimeException ex) {
			throw new AssertionError("The page never showed " + expected + "; it shows: "
					+ browser.evaluate("document.body.innerText") + "\nChromium's output:\n" + browser.log(), ex);
		}
	}

}
