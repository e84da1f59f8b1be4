package dev.llmresilience.chat;

import java.io.Serializable;
import java.time.Duration;

/**
 * One attempt the gateway made (or was refused) on one endpoint.
 *
 * @param endpoint the endpoint's name
 * @param outcome what it came to
 * @param duration from the attempt's start to its end; zero when no call was made
 */
public record Attempt(String endpoint, Outcome outcome, Duration duration) implements Serializable {
}
