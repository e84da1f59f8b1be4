package dev.llmresilience.failure;

import org.jspecify.annotations.Nullable;

/**
 * The error object a provider put in a response body, reduced to what classification needs.
 *
 * @param type the error's type, e.g. {@code invalid_request_error}
 * @param code the error's code, e.g. {@code content_filter} or {@code context_length_exceeded}
 * @param message the provider's message
 */
public record ProviderError(@Nullable String type, @Nullable String code, @Nullable String message) {
}
