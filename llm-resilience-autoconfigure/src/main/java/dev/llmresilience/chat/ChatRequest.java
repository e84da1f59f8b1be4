package dev.llmresilience.chat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * An immutable chat request. Build one with {@link #builder()} or {@link #ofUser(String)}.
 *
 * @param messages the conversation, at least one message
 * @param route the route to use, or {@code null} for the default route
 * @param temperature sampling temperature, or {@code null} for the model's default
 * @param maxTokens largest completion, or {@code null} for the model's default
 * @param extra further fields passed through to the provider's request body as they are
 * (e.g. {@code top_p}, {@code tools}, {@code response_format}); a field the starter writes itself
 * ({@code model}, {@code messages}, {@code stream}, ...) is refused when the request is made
 * @param timeout overrides the endpoint's per-attempt {@code timeout}, or {@code null}
 * @param deadline overrides {@code llm.gateway.deadline} for this call, or {@code null}
 * @param deferrable whether this request may wait in the deferred queue when nothing can answer now
 * @param cacheScope whose answers this request may be served from the fallback cache: the tenant or
 * user the answer belongs to, or {@code null} for answers that any caller may be given
 */
public record ChatRequest(List<ChatMessage> messages, @Nullable String route, @Nullable Double temperature,
		@Nullable Integer maxTokens, Map<String, Object> extra, @Nullable Duration timeout,
		@Nullable Duration deadline, boolean deferrable, @Nullable String cacheScope) {

	public ChatRequest {
		if (messages == null || messages.isEmpty()) {
			throw new IllegalArgumentException("A ChatRequest needs at least one message");
		}
		messages = List.copyOf(messages);
		extra = (extra != null) ? Collections.unmodifiableMap(new LinkedHashMap<>(extra)) : Map.of();
		requirePositive(timeout, "timeout");
		requirePositive(deadline, "deadline");
	}

	/**
	 * A request with no cache scope.
	 * @param messages the conversation, at least one message
	 * @param route the route to use, or {@code null} for the default route
	 * @param temperature sampling temperature, or {@code null} for the model's default
	 * @param maxTokens largest completion, or {@code null} for the model's default
	 * @param extra further fields passed through to the provider's request body as they are
	 * @param timeout overrides the endpoint's per-attempt {@code timeout}, or {@code null}
	 * @param deadline overrides {@code llm.gateway.deadline} for this call, or {@code null}
	 * @param deferrable whether this request may wait in the deferred queue when nothing can answer now
	 */
	public ChatRequest(List<ChatMessage> messages, @Nullable String route, @Nullable Double temperature,
			@Nullable Integer maxTokens, Map<String, Object> extra, @Nullable Duration timeout,
			@Nullable Duration deadline, boolean deferrable) {
		this(messages, route, temperature, maxTokens, extra, timeout, deadline, deferrable, null);
	}

	/**
	 * A request with one user message and every other setting at its default.
	 * @param userPrompt the user's prompt
	 * @return the request
	 */
	public static ChatRequest ofUser(String userPrompt) {
		return builder().user(userPrompt).build();
	}

	/**
	 * A new builder.
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * A builder holding this request's values, to derive a changed copy.
	 * @return the builder
	 */
	public Builder toBuilder() {
		Builder builder = new Builder();
		builder.messages.addAll(this.messages);
		builder.route = this.route;
		builder.temperature = this.temperature;
		builder.maxTokens = this.maxTokens;
		builder.extra.putAll(this.extra);
		builder.timeout = this.timeout;
		builder.deadline = this.deadline;
		builder.deferrable = this.deferrable;
		builder.cacheScope = this.cacheScope;
		return builder;
	}

	private static void requirePositive(@Nullable Duration duration, String name) {
		if (duration != null && (duration.isNegative() || duration.isZero())) {
			throw new IllegalArgumentException("A ChatRequest's " + name + " must be positive, was " + duration);
		}
	}

	/** Builds a {@link ChatRequest}. */
	public static final class Builder {

		private final List<ChatMessage> messages = new ArrayList<>();

		private @Nullable String route;

		private @Nullable Double temperature;

		private @Nullable Integer maxTokens;

		private final Map<String, Object> extra = new LinkedHashMap<>();

		private @Nullable Duration timeout;

		private @Nullable Duration deadline;

		private boolean deferrable;

		private @Nullable String cacheScope;

		private Builder() {
		}

		public Builder message(ChatMessage message) {
			this.messages.add(message);
			return this;
		}

		public Builder messages(List<ChatMessage> messages) {
			this.messages.addAll(messages);
			return this;
		}

		public Builder system(String content) {
			return message(ChatMessage.system(content));
		}

		public Builder user(String content) {
			return message(ChatMessage.user(content));
		}

		public Builder assistant(String content) {
			return message(ChatMessage.assistant(content));
		}

		public Builder route(@Nullable String route) {
			this.route = route;
			return this;
		}

		public Builder temperature(@Nullable Double temperature) {
			this.temperature = temperature;
			return this;
		}

		public Builder maxTokens(@Nullable Integer maxTokens) {
			this.maxTokens = maxTokens;
			return this;
		}

		public Builder extra(String field, Object value) {
			this.extra.put(field, value);
			return this;
		}

		public Builder timeout(@Nullable Duration timeout) {
			this.timeout = timeout;
			return this;
		}

		public Builder deadline(@Nullable Duration deadline) {
			this.deadline = deadline;
			return this;
		}

		public Builder deferrable(boolean deferrable) {
			this.deferrable = deferrable;
			return this;
		}

		/**
		 * Keep this request's answer in the fallback cache for one scope only: the tenant or user it
		 * belongs to. An answer cached in one scope is never served to a request of another (or of
		 * none). Leave it unset only for answers any caller may see.
		 * @param cacheScope the scope, or {@code null} for none
		 * @return this builder
		 */
		public Builder cacheScope(@Nullable String cacheScope) {
			this.cacheScope = cacheScope;
			return this;
		}

		public ChatRequest build() {
			return new ChatRequest(this.messages, this.route, this.temperature, this.maxTokens, this.extra,
					this.timeout, this.deadline, this.deferrable, this.cacheScope);
		}

	}

}
