package dev.llmresilience.autoconfigure;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.stream.Stream;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the bad-configuration tests assert of every rejected configuration: start-up fails with an
 * {@link LlmConfigurationException} naming the property, the problem and the fix, Boot's failure
 * report says the same, and neither shows the API key nor a header value.
 */
final class Rejections {

	private Rejections() {
	}

	/**
	 * The properties of one valid endpoint {@code main} with a key and a header, then the given ones.
	 * @param apiKey the endpoint's key
	 * @param headerValue the value of its header {@code X-Secret}
	 * @param properties more properties
	 * @return all the properties
	 */
	static String[] withEndpoint(String apiKey, String headerValue, String... properties) {
		String[] endpoint = { "llm.endpoints.main.base-url=http://localhost:8080/v1", "llm.endpoints.main.model=gpt-4o",
				"llm.endpoints.main.api-key=" + apiKey, "llm.endpoints.main.headers.X-Secret=" + headerValue };
		return Stream.concat(Arrays.stream(endpoint), Arrays.stream(properties)).toArray(String[]::new);
	}

	static void assertRejected(ApplicationContextRunner runner, String[] properties, String property, String problem,
			String action, String... secrets) {
		runner.withPropertyValues(properties).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			assertThat(failure).rootCause().isInstanceOf(LlmConfigurationException.class);
			LlmConfigurationException exception = (LlmConfigurationException) rootCause(failure);
			assertThat(exception.getProperty()).isEqualTo(property);
			assertThat(exception.getMessage()).startsWith(property + ": ").contains(problem).contains(action);
			FailureAnalysis analysis = new LlmConfigurationFailureAnalyzer().analyze(failure);
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).startsWith("Invalid llm-resilience configuration: property '" + property + "' ")
				.contains(problem);
			assertThat(analysis.getAction()).contains(action);
			assertThat(analysis.getCause()).isSameAs(exception);
			assertThat(stackTrace(failure) + analysis.getDescription() + analysis.getAction()).doesNotContain(secrets);
		});
	}

	private static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static String stackTrace(Throwable failure) {
		StringWriter text = new StringWriter();
		failure.printStackTrace(new PrintWriter(text));
		return text.toString();
	}

}
