package dev.llmresilience.dashboard;

import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.imageio.ImageIO;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.LlmBreakersEndpoint;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

import static dev.llmresilience.support.Answers.answering;
import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.error;
import static dev.llmresilience.support.Answers.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The dashboard in a real browser: headless Chromium opens {@code /llm/dashboard} of a running
 * WebFlux and a running Servlet application, and what the page shows is read from its DOM, before
 * and after the primary's breaker opens, without reloading the page (it refreshes itself from
 * {@code /actuator/llmbreakers}); during an outage, its last 15 minutes drawn, its first transition
 * pinned and its probe cycles folded, and the screenshot command of docs/dashboard.md. Skipped, saying so, on a machine without Chromium: install
 * Debian's {@code chromium} package (which {@code .ci/run} does when it runs as root) or set
 * {@code CHROMIUM} to a Chrome or Chromium binary.
 */
class DashboardBrowserTests {

	private static final Optional<Path> CHROMIUM = HeadlessChromium.find();

	private static final String PRIMARY_STATE = "document.querySelector('tr[data-endpoint=\"primary\"] .state')?.dataset.state ?? null";

	private static final JsonMapper JSON = JsonMapper.builder().build();

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

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "REACTIVE" })
	void duringAnOutageThePageDrawsTheLastFifteenMinutesPinsItsStartAndFoldsItsProbes(WebApplicationType type)
			throws Exception {
		this.upstreams.primary().setDispatcher(always(error(500, "server_error")));
		this.upstreams.backup().setDispatcher(answering("from the backup"));
		try (ConfigurableApplicationContext app = DashboardApplications.start(type, this.upstreams,
				"--llm.dashboard.enabled=true", "--llm.dashboard.refresh=500ms", "--llm.endpoints.primary.retry.max-attempts=1",
				"--llm.endpoints.primary.circuit-breaker.sliding-window-size=2",
				"--llm.endpoints.primary.circuit-breaker.permitted-calls-in-half-open-state=1",
				"--llm.endpoints.primary.circuit-breaker.wait-duration-in-open-state=300ms");
				HeadlessChromium browser = HeadlessChromium.open(CHROMIUM.get(),
						"http://localhost:" + DashboardApplications.port(app) + "/llm/dashboard")) {
			awaitPage(browser, PRIMARY_STATE, "CLOSED");
			LlmGateway gateway = app.getBean(LlmGateway.class);
			for (int i = 0; i < 2; i++) {
				assertThat(gateway.chat("hello").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.FALLBACK);
			}
			LlmBreakersEndpoint actuator = app.getBean(LlmBreakersEndpoint.class);
			// the synthetic probes fail, every 300ms, until the opening is no longer among the 10 transitions kept
			await("the opening scrolled out of the recent transitions").atMost(Duration.ofSeconds(60))
				.pollInterval(Duration.ofMillis(200))
				.until(() -> actuator.breaker("primary").past().transitions().stream().noneMatch((t) -> t.from().equals("CLOSED")));
			assertThat(gateway.chat("hello").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.FALLBACK);
			int probes = actuator.breaker("primary").past().history().outage().probes();
			assertThat(probes).isGreaterThanOrEqualTo(5);
			String pinned = "document.querySelector('#transitions li.pinned[data-endpoint=\"primary\"]')?.textContent ?? null";
			awaitPage(browser, "(" + pinned + ")?.includes('primary: CLOSED \u2192 OPEN (failure rate 100.0 % over 2 calls)') ?? null",
					"true");
			assertThat(browser.evaluate("document.querySelector('#transitions li').className"))
				.as("the outage's start comes first").isEqualTo("pinned");
			assertThat(browser.evaluate(pinned)).endsWith("began the outage, not over");
			assertThat(browser.evaluate("document.querySelectorAll('#transitions li.probes[data-endpoint=\"primary\"]').length + ''"))
				.as("the probe cycles folded into one line").isEqualTo("1");
			assertThat(browser.evaluate("document.querySelector('#transitions li.probes').textContent"))
				.matches("(?s).*  primary: probed \\d+ times, .+\u2013.+, (still open|probing now)");
			// every cycle of the outage, not only those of the 10 transitions kept (at the page's next refresh)
			awaitPage(browser, "Number(/probed (\\d+) times/.exec(document.querySelector('#transitions li.probes').textContent)[1]) >= "
					+ probes, "true");
			assertThat(browser.evaluate("[...document.querySelectorAll('#transitions li')].filter((li) => "
					+ "li.textContent.includes('HALF_OPEN')).length + ''")).as("no probe step on a line of its own").isEqualTo("0");
			String timeline = "document.querySelector('#history .timeline[data-endpoint=\"primary\"]')";
			assertThat(browser.evaluate(timeline + ".querySelectorAll('svg[data-chart=\"states\"] rect.band[data-state=\"OPEN\"]').length > 0"))
				.as("an OPEN band").isEqualTo("true");
			assertThat(browser.evaluate(timeline + ".querySelectorAll('svg[data-chart=\"states\"] rect.band[data-state=\"CLOSED\"]').length > 0"))
				.as("a CLOSED band before it").isEqualTo("true");
			assertThat(browser.evaluate("Number(" + timeline + ".querySelector('svg[data-chart=\"states\"] rect.band[data-state=\"OPEN\"]').getAttribute('width')) > 0"))
				.isEqualTo("true");
			assertThat(browser.evaluate(timeline + ".querySelectorAll('svg[data-chart=\"answers\"] rect[data-tier=\"FALLBACK\"]').length > 0"))
				.as("the fallback answers in the tier series").isEqualTo("true");
			assertThat(browser.evaluate(timeline + ".querySelectorAll('svg[data-chart=\"answers\"] rect[data-tier=\"PRIMARY\"]').length + ''"))
				.isEqualTo("0");
			assertThat(browser.evaluate("document.querySelectorAll('#history .timeline').length + ''")).isEqualTo("2");
			assertThat(browser.evaluate("document.body.dataset.ready")).isEqualTo("true");

			// the screenshot command of docs/dashboard.md, as written, captures the data, not "loading"
			String url = "http://localhost:" + DashboardApplications.port(app) + "/llm/dashboard";
			Path directory = Files.createTempDirectory("llm-dashboard-screenshot");
			try {
				Path png = directory.resolve("dashboard.png");
				String dom = documentedScreenshot(url, directory, "--dump-dom");
				assertThat(dom).contains("2 endpoints, 1 open").doesNotContain("loading\u2026").contains("data-ready=\"true\"");
				documentedScreenshot(url, directory, "--screenshot=" + png);
				BufferedImage image = ImageIO.read(png.toFile());
				assertThat(image.getWidth()).isEqualTo(1800);
				assertThat(image.getHeight()).isEqualTo(1000);
				assertThat(pixels(image, 0xcf222e)).as("the OPEN band and state drawn").isGreaterThan(150);
				assertThat(pixels(image, 0x1a7f37)).as("the CLOSED bands drawn").isGreaterThan(150);
				assertThat(pixels(image, 0xd4a72c)).as("the fallback answers drawn").isGreaterThan(10);
				Path kept = Path.of("target", "dashboard-" + type.name().toLowerCase() + ".png");
				Files.copy(png, kept, StandardCopyOption.REPLACE_EXISTING);
			}
			finally {
				try (Stream<Path> files = Files.walk(directory)) {
					files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
				}
			}
		}
	}

	/**
	 * Run the screenshot command of docs/dashboard.md, with this machine's Chromium, the test's URL, a
	 * profile of its own and the given output flag in place of its {@code --screenshot=...}.
	 */
	private static String documentedScreenshot(String url, Path directory, String output) throws Exception {
		String docs = Files.readString(Path.of("..", "docs", "dashboard.md"));
		Matcher block = Pattern.compile("```sh\\n(chromium [^`]*--screenshot=[^`]*)```").matcher(docs);
		assertThat(block.find()).as("the screenshot command in docs/dashboard.md").isTrue();
		List<String> command = new ArrayList<>();
		for (String word : block.group(1).replace("\\\n", " ").trim().split("\\s+")) {
			command.add(word.startsWith("--screenshot=") ? output
					: word.startsWith("http://localhost:8080/") ? url : word.equals("chromium") ? CHROMIUM.get().toString() : word);
		}
		command.add(1, "--user-data-dir=" + directory.resolve("profile"));
		Process process = new ProcessBuilder(command).directory(directory.toFile())
			.redirectError(directory.resolve("chromium.log").toFile())
			.start();
		String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(90, TimeUnit.SECONDS)).as("the documented command ends").isTrue();
		assertThat(process.exitValue()).as(Files.readString(directory.resolve("chromium.log"))).isZero();
		return out;
	}

	private static long pixels(BufferedImage image, int rgb) {
		long count = 0;
		for (int y = 0; y < image.getHeight(); y++) {
			for (int x = 0; x < image.getWidth(); x++) {
				if ((image.getRGB(x, y) & 0xffffff) == rgb) {
					count++;
				}
			}
		}
		return count;
	}

	private static Dispatcher always(MockResponse response) {
		return new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return response;
			}
		};
	}

	/** An endpoint name whose image would run a handler if the page parsed it as HTML. */
	private static final String HOSTILE_ENDPOINT = "<img src=x onerror=\"window.__pwned='endpoint'\">\"'&amp;";

	private static final String HOSTILE_MODEL = "</script><script>window.__pwned='model'</script>\"'<b>bold</b>";

	private static final String HOSTILE_REGION = "<svg onload=\"window.__pwned='region'\"></svg>";

	private static final String HOSTILE_ROUTE = "<img src=y onerror=\"window.__pwned='route'\"> '\"</td>";

	private static final String HOSTILE_ERROR = "<img src=z onerror=\"window.__pwned='error'\"></script>\"'";

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "REACTIVE", "SERVLET" })
	void hostileNamesModelsAndProviderErrorsShowAsTextAndRunNothing(WebApplicationType type) throws Exception {
		try (MockWebServer hostile = new MockWebServer()) {
			hostile.setDispatcher(new Dispatcher() {
				@Override
				public MockResponse dispatch(RecordedRequest request) {
					return json(500, "{\"error\":{\"message\":" + quoted(HOSTILE_ERROR) + ",\"type\":" + quoted(HOSTILE_ERROR)
							+ ",\"code\":" + quoted(HOSTILE_ERROR) + "}}");
				}
			});
			hostile.start();
			String endpoint = "llm.endpoints[" + HOSTILE_ENDPOINT + "].";
			Map<String, Object> properties = Map.of(endpoint + "base-url", hostile.url("/v1").toString(),
					endpoint + "model", HOSTILE_MODEL, endpoint + "region", HOSTILE_REGION, endpoint + "priority", "2",
					endpoint + "api-key-required", "false", endpoint + "retry.max-attempts", "1",
					endpoint + "circuit-breaker.sliding-window-size", "2", "llm.routes[" + HOSTILE_ROUTE + "][0]", HOSTILE_ENDPOINT,
					"llm.routes[" + HOSTILE_ROUTE + "][1]", "backup");
			try (ConfigurableApplicationContext app = DashboardApplications.start(type, this.upstreams, properties,
					"--llm.dashboard.enabled=true", "--llm.dashboard.refresh=500ms");
					HeadlessChromium browser = HeadlessChromium.open(CHROMIUM.get(),
							"http://localhost:" + DashboardApplications.port(app) + "/llm/dashboard")) {
				LlmGateway gateway = app.getBean(LlmGateway.class);
				for (int i = 0; i < 2; i++) {
					this.upstreams.backup().enqueue(completion("from the backup"));
					assertThat(gateway.chat(ChatRequest.builder().user("hello").route(HOSTILE_ROUTE).build())
						.block(Duration.ofSeconds(10))
						.tier()).isEqualTo(Tier.FALLBACK);
				}
				String row = "[...document.querySelectorAll('#endpoints tbody tr')].find((r) => r.dataset.endpoint === "
						+ quoted(HOSTILE_ENDPOINT) + ")";
				awaitPage(browser, "(" + row + ")?.querySelector('.state')?.dataset.state ?? null", "OPEN");
				assertThat(browser.evaluate(row + ".cells[0].textContent")).isEqualTo(HOSTILE_ENDPOINT);
				assertThat(browser.evaluate(row + ".cells[1].textContent"))
					.isEqualTo(HOSTILE_MODEL + " (" + HOSTILE_REGION + ")");
				String route = "[...document.querySelectorAll('#routes tbody tr')].find((r) => r.dataset.route === "
						+ quoted(HOSTILE_ROUTE) + ")";
				assertThat(browser.evaluate(route + ".cells[0].textContent")).isEqualTo(HOSTILE_ROUTE);
				assertThat(browser.evaluate(route + ".cells[1].textContent"))
					.isEqualTo(HOSTILE_ENDPOINT + " \u2192 backup");
				assertThat(browser.evaluate("[...document.querySelectorAll('#transitions li')].map((li) => li.textContent)"
						+ ".find((text) => text.includes(': CLOSED \u2192 OPEN')) ?? null"))
					.contains("  " + HOSTILE_ENDPOINT + ": CLOSED \u2192 OPEN");
				assertThat(browser.evaluate("String(window.__pwned)")).as("a script or handler of the strings ran")
					.isEqualTo("undefined");
				assertThat(browser.evaluate("document.querySelectorAll('img, svg:not(.chart), b, script').length + ''"))
					.as("elements the strings would have made (the page's own script is the one)")
					.isEqualTo("1");
				assertThat(browser.evaluate("document.body.innerText.includes('onerror')")).isEqualTo("true");
				assertThat(browser.evaluate("document.getElementById('status').textContent")).isEqualTo("3 endpoints, 1 open");
				assertThat(browser.evaluate("document.getElementById('error').hidden")).isEqualTo("true");
			}
		}
	}

	@ParameterizedTest
	@EnumSource(value = WebApplicationType.class, names = { "REACTIVE", "SERVLET" })
	void browserRunsThePagesOwnScriptAndStyleButNoInjectedOne(WebApplicationType type) throws Exception {
		try (ConfigurableApplicationContext app = DashboardApplications.start(type, this.upstreams,
				"--llm.dashboard.enabled=true", "--llm.dashboard.refresh=500ms");
				HeadlessChromium browser = HeadlessChromium.open(CHROMIUM.get(),
						"http://localhost:" + DashboardApplications.port(app) + "/llm/dashboard")) {
			awaitPage(browser, PRIMARY_STATE, "CLOSED");
			assertThat(browser.evaluate("getComputedStyle(document.querySelector('header')).display"))
				.as("the page's own style applies").isEqualTo("flex");
			assertThat(browser.evaluate("(() => { const s = document.createElement('script');"
					+ " s.textContent = 'window.__injected = \"ran\"'; document.head.appendChild(s);"
					+ " return String(window.__injected); })()")).as("an injected inline script").isEqualTo("undefined");
			assertThat(browser.evaluate("(() => { const s = document.createElement('style');"
					+ " s.textContent = 'body { outline: 7px solid red }'; document.head.appendChild(s);"
					+ " return getComputedStyle(document.body).outlineStyle; })()")).as("an injected inline style")
				.isEqualTo("none");
			assertThat(browser.evaluate("(() => { const d = document.createElement('div');"
					+ " d.innerHTML = '<img src=x onerror=\"window.__handler = 1\">'; document.body.appendChild(d);"
					+ " return new Promise((done) => setTimeout(() => done(String(window.__handler)), 500)); })()"))
				.as("an injected event handler").isEqualTo("undefined");
		}
	}

	private static String quoted(String text) {
		return JSON.writeValueAsString(text);
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
