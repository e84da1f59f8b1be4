package dev.llmresilience.sample;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaged sample application, started as a user starts it ({@code java -jar}) with a bad
 * base URL, refuses to start and says which property is wrong and what to do. Run by
 * maven-failsafe-plugin in {@code verify}, after {@code package} has built the jar.
 */
class PackagedJarBadConfigurationIT {

	@Test
	void packagedApplicationWithAnFtpBaseUrlFailsToStartNamingThePropertyAndTheFix(@TempDir Path directory)
			throws Exception {
		Path jar = Path.of(System.getProperty("sample.jar", "target/sample-app.jar"));
		assertThat(jar).as("the packaged sample (run 'package' first)").isRegularFile();
		Path log = directory.resolve("output.txt");
		Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar",
				jar.toString(), "--llm.endpoints.primary.base-url=ftp://x", "--server.port=0")
			.redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.start();
		boolean exited = process.waitFor(120, TimeUnit.SECONDS);
		if (!exited) {
			process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
		String output = Files.readString(log, StandardCharsets.UTF_8);
		assertThat(exited).as("the application stopped by itself; its output:%n%s", output).isTrue();
		assertThat(process.exitValue()).as("exit code").isNotZero();
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Invalid llm-resilience configuration: property 'llm.endpoints.primary.base-url' is 'ftp://x', "
					+ "which is not an http(s) URL.")
			.contains("Use an absolute http:// or https:// URL with a host, e.g. https://api.openai.com/v1.")
			.doesNotContain("sim-key-primary")
			.doesNotContain("sim-key-backup");
	}

}
