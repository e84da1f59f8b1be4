package dev.llmresilience.spi;

import java.io.Serializable;
import java.time.Instant;

import dev.llmresilience.chat.ChatResponse;

/**
 * An answer kept for the CACHED tier.
 *
 * @param response the answer as it was given
 * @param answeredAt when it was given
 */
public record CachedAnswer(ChatResponse response, Instant answeredAt) implements Serializable {
}
