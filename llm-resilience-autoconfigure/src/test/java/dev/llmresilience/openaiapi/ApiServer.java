package dev.llmresilience.openaiapi;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A whole application, WebFlux or Servlet, on a free port, with everything on the test class path
 * auto-configured as a user's application would be.
 */
final class ApiServer implements AutoCloseable {

	private final ConfigurableApplicationContext context;

	private final HttpClient http = HttpClient.newHttpClient();

	private ApiServer(ConfigurableApplicationContext context) {
		this.context = context;
	}

	/**
	 * Start an application.
	 * @param type {@link WebApplicationType#REACTIVE} or {@link WebApplicationType#SERVLET}
	 * @param properties its properties, as {@code key=value}
	 * @return the running application
	 */
	static ApiServer start(WebApplicationType type, String... properties) {
		List<String> args = new ArrayList<>();
		args.add("--server.port=0");
		args.add("--spring.main.web-application-type=" + type.name().toLowerCase());
		for (String property : properties) {
			args.add("--" + property);
		}
		return new ApiServer(new SpringApplicationBuilder(App.class).run(args.toArray(String[]::new)));
	}

	int port() {
		return Integer.parseInt(this.context.getEnvironment().getRequiredProperty("local.server.port"));
	}

	String baseUrl() {
		return "http://localhost:" + port() + "/v1";
	}

	/**
	 * Post a body to {@code /chat/completions} as it is, as a client with a key would.
	 * @param clientKey the client's key
	 * @param body the body
	 * @param headers more headers
	 * @return the response
	 */
	HttpResponse<String> postChat(String clientKey, String body, Map<String, String> headers)
			throws IOException, InterruptedException {
		return post("/chat/completions", clientKey, body, headers);
	}

	/**
	 * Post a body to a path under {@code /v1} as it is, as a client with a key would.
	 * @param path the path, e.g. {@code /responses}
	 * @param clientKey the client's key
	 * @param body the body
	 * @param headers more headers
	 * @return the response
	 */
	HttpResponse<String> post(String path, String clientKey, String body, Map<String, String> headers)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl() + path))
			.timeout(Duration.ofSeconds(20))
			.header("Authorization", "Bearer " + clientKey)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		headers.forEach(request::header);
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	ConfigurableApplicationContext context() {
		return this.context;
	}

	@Override
	public void close() {
		this.context.close();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		BusyCounter busyCounter() {
			return new BusyCounter();
		}

	}

}
