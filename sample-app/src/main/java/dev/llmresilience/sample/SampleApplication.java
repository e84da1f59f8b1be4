package dev.llmresilience.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A demo of llm-resilience: two endpoints, {@code primary} and {@code backup}, in front of a
 * simulated OpenAI-compatible provider served by this application, so it runs with no API key and
 * no network.
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
