package dev.llmresilience.autoconfigure;

import java.io.IOException;
import java.nio.file.Path;
import java.util.jar.JarFile;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code package} (so {@code install}) builds a sources jar and a javadoc jar beside the library's
 * jar, for IDEs (the properties' javadoc is the documentation of every key) and for publishing.
 * Run by maven-failsafe-plugin in {@code verify}, after {@code package}.
 */
class PublishedJarsIT {

	private static final Path BASE = Path.of(System.getProperty("artifact.base", "target/llm-resilience-autoconfigure"));

	@Test
	void sourcesJarHoldsTheSourcesOfThePropertiesAndTheGateway() throws IOException {
		try (JarFile jar = jar("-sources.jar")) {
			assertThat(jar.getEntry("dev/llmresilience/autoconfigure/LlmProperties.java")).isNotNull();
			assertThat(jar.getEntry("dev/llmresilience/autoconfigure/EndpointProperties.java")).isNotNull();
			assertThat(jar.getEntry("dev/llmresilience/gateway/LlmGateway.java")).isNotNull();
		}
	}

	@Test
	void javadocJarHoldsThePublicApi() throws IOException {
		try (JarFile jar = jar("-javadoc.jar")) {
			assertThat(jar.getEntry("index.html")).isNotNull();
			assertThat(jar.getEntry("dev/llmresilience/gateway/LlmGateway.html")).isNotNull();
			assertThat(jar.getEntry("dev/llmresilience/chat/ChatRequest.html")).isNotNull();
		}
	}

	private static JarFile jar(String suffix) throws IOException {
		Path path = Path.of(BASE + suffix);
		assertThat(path).as("built by package").isRegularFile();
		return new JarFile(path.toFile());
	}

}
