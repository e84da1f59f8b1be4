package dev.llmresilience.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Base64;
import java.util.StringJoiner;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

/**
 * The dashboard's HTML: one page with its style and script inline (allowed by their hashes, see
 * {@link #contentSecurityPolicy()}) and nothing loaded from elsewhere, which fetches the
 * {@code llmbreakers} actuator endpoint every {@code refresh} and draws each endpoint's breaker,
 * each route's degraded share, the recent transitions and the guards. The page holds no data
 * itself; what it shows is what the actuator endpoint shows to the same browser.
 */
final class DashboardPage {

	/** Where the page is served. */
	public static final String PATH = "/llm/dashboard";

	// The page's own <style> and <script>, whose hashes the policy allows: nothing else inline runs
	private static final Pattern STYLE = Pattern.compile("<style>(.*?)</style>", Pattern.DOTALL);

	private static final Pattern SCRIPT = Pattern.compile("<script>(.*?)</script>", Pattern.DOTALL);

	private final String html;

	private final String contentSecurityPolicy;

	/**
	 * Render the page.
	 * @param source the URL of the {@code llmbreakers} endpoint, relative to the page (e.g.
	 * {@code ../actuator/llmbreakers})
	 * @param refresh how often the page reloads it
	 */
	public DashboardPage(String source, Duration refresh) {
		this.html = template().replace("__SOURCE__", javaScriptString(source))
			.replace("__REFRESH_MILLIS__", String.valueOf(refresh.toMillis()));
		this.contentSecurityPolicy = "default-src 'none'; script-src " + hashes(SCRIPT, this.html) + "; style-src "
				+ hashes(STYLE, this.html)
				+ "; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";
	}

	/**
	 * The page.
	 * @return the HTML
	 */
	public String html() {
		return this.html;
	}

	/**
	 * The page's Content-Security-Policy: its own inline style and script, allowed by their SHA-256
	 * hashes (computed once, from the page as rendered), requests to its own origin only, nothing
	 * else. No {@code 'unsafe-inline'}: a script or style that found its way into the page, or an
	 * event handler attribute, does not run.
	 * @return the policy
	 */
	public String contentSecurityPolicy() {
		return this.contentSecurityPolicy;
	}

	/**
	 * The headers the page is served with, the same in a WebFlux and a Servlet application: HTML in
	 * UTF-8, never stored, its {@link #contentSecurityPolicy()}, and no content sniffing.
	 * @param headers the response's headers, to add them to
	 */
	public void addHeaders(HttpHeaders headers) {
		headers.setContentType(new MediaType(MediaType.TEXT_HTML, StandardCharsets.UTF_8));
		headers.setCacheControl(CacheControl.noStore());
		headers.set("Content-Security-Policy", this.contentSecurityPolicy);
		headers.set("X-Content-Type-Options", "nosniff");
	}

	/**
	 * The URL of the {@code llmbreakers} endpoint relative to {@link #PATH}, so that it also holds
	 * under a servlet context path or a WebFlux base path.
	 * @param actuatorBasePath {@code management.endpoints.web.base-path}, e.g. {@code /actuator}
	 * @param endpointPath the endpoint's path below it, {@code llmbreakers} unless mapped otherwise
	 * @return e.g. {@code ../actuator/llmbreakers}
	 */
	public static String source(String actuatorBasePath, String endpointPath) {
		String base = actuatorBasePath.replaceAll("^/+|/+$", "");
		String endpoint = endpointPath.replaceAll("^/+|/+$", "");
		return "../" + (base.isEmpty() ? "" : base + "/") + endpoint;
	}

	// A CSP source list of the SHA-256 of each element's text, as the browser hashes it (UTF-8)
	private static String hashes(Pattern element, String html) {
		StringJoiner sources = new StringJoiner(" ");
		Matcher matcher = element.matcher(html);
		while (matcher.find()) {
			sources.add("'sha256-" + Base64.getEncoder().encodeToString(sha256(matcher.group(1))) + "'");
		}
		if (sources.length() == 0) {
			throw new IllegalStateException("dashboard.html has no " + element.pattern() + ": the jar is damaged");
		}
		return sources.toString();
	}

	private static byte[] sha256(String text) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every Java runtime has SHA-256", ex);
		}
	}

	private static String template() {
		try (InputStream in = DashboardPage.class.getResourceAsStream("dashboard.html")) {
			if (in == null) {
				throw new IllegalStateException("dashboard.html is missing from the llm-resilience jar");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	// The value comes from configuration, but goes into a script: quote it as a JSON string, with
	// "<" escaped so that no "</script>" can close the script early.
	private static String javaScriptString(String value) {
		StringBuilder quoted = new StringBuilder("\"");
		for (char c : value.toCharArray()) {
			switch (c) {
				case '"' -> quoted.append("\\\"");
				case '\\' -> quoted.append("\\\\");
				case '<' -> quoted.append("\\u003c");
				default -> {
					if (c < 0x20) {
						quoted.append(String.format("\\u%04x", (int) c));
					}
					else {
						quoted.append(c);
					}
				}
			}
		}
		return quoted.append('"').toString();
	}

}
