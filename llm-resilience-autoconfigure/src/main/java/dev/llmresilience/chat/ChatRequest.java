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
 * (e.g. {@code top_p}, {@code response_format}); a field the starter writes itself
 * ({@code model}, {@code messages}, {@code stream}, {@code tools}, ...) is refused when the request is made
 * @param timeout overrides the endpoint's per-attempt {@code timeout}, or {@code null}
 * @param deadline overrides {@code llm.gateway.deadline} for this call, or {@code null}
 * @param deferrable whether this request may wait in the deferred queue when nothing can answer now
 * @param cacheScope whose answers this request may be served from the fallback cache: the tenant or
 * user the answer belongs to, or {@code null} for answers that any caller may be given
 * @param tools the functions the model may call; empty for none
 * @param toolChoice whether and which tool the model must call, or {@code null} for the provider's
 * default (auto when there are tools)
 * @param priority whose call it is: {@link Priority#INTERACTIVE} (the default, also for {@code null})
 * or {@link Priority#BATCH}, which uses at most {@code llm.gateway.batch-share} of an endpoint
 */
public record ChatRequest(List<ChatMessage> messages, @Nullable String route, @Nullable Double temperature,
		@Nullable Integer maxTokens, Map<String, Object> extra, @Nullable Duration timeout,
		@Nullable Duration deadline, boolean deferrable, @Nullable String cacheScope, List<Tool> tools,
		@Nullable ToolChoice toolChoice, Priority priority) {

	public ChatRequest {
		priority = (priority != null) ? priority : Priority.INTERACTIVE;
		if (messages == null || messages.isEmpty()) {
			throw new IllegalArgumentException("A ChatRequest needs at least one message");
		}
		messages = List.copyOf(messages);
		extra = (extra != null) ? Collections.unmodifiableMap(new LinkedHashMap<>(extra)) : Map.of();
		tools = (tools != null) ? List.copyOf(tools) : List.of();
		requirePositive(timeout, "timeout");
		requirePositive(deadline, "deadline");
		if (tools.stream().map(Tool::name).distinct().count() != tools.size()) {
			throw new IllegalArgumentException("A ChatRequest's tools must have distinct names");
		}
	}

	/**
	 * An interactive request.
	 * @param messages the conversation, at least one message
	 * @param route the route to use, or {@code null} for the default route
	 * @param temperature sampling temperature, or {@code null} for the model's default
	 * @param maxTokens largest completion, or {@code null} for the model's default
	 * @param extra further fields passed through to the provider's request body as they are
	 * @param timeout overrides the endpoint's per-attempt {@code timeout}, or {@code null}
	 * @param deadline overrides {@code llm.gateway.deadline} for this call, or {@code null}
	 * @param deferrable whether this request may wait in the deferred queue when nothing can answer now
	 * @param cacheScope the fallback cache's scope of the answer, or {@code null}
	 * @param tools the functions the model may call; empty for none
	 * @param toolChoice whether and which tool the model must call, or {@code null}
	 */
	public ChatRequest(List<ChatMessage> messages, @Nullable String route, @Nullable Double temperature,
			@Nullable Integer maxTokens, Map<String, Object> extra, @Nullable Duration timeout,
			@Nullable Duration deadline, boolean deferrable, @Nullable String cacheScope, List<Tool> tools,
			@Nullable ToolChoice toolChoice) {
		this(messages, route, temperature, maxTokens, extra, timeout, deadline, deferrable, cacheScope, tools,
				toolChoice, null);
	}

	/**
	 * A request without tools (the constructor before tools became fields of their own).
	 * @param messages the conversation, at least one message
	 * @param route the route to use, or {@code null} for the default route
	 * @param temperature sampling temperature, or {@code null} for the model's default
	 * @param maxTokens largest completion, or {@code null} for the model's default
	 * @param extra further fields passed through to the provider's request body as they are
	 * @param timeout overrides the endpoint's per-attempt {@code timeout}, or {@code null}
	 * @param deadline overrides {@code llm.gateway.deadline} for this call, or {@code null}
	 * @param deferrable whether this request may wait in the deferred queue when nothing can answer now
	 * @param cacheScope the fallback cache's scope of the answer, or {@code null}
	 */
	public ChatRequest(List<ChatMessage> messages, @Nullable String route, @Nullable Double temperature,
			@Nullable Integer maxTokens, Map<String, Object> extra, @Nullable Duration timeout,
			@Nullable Duration deadline, boolean deferrable, @Nullable String cacheScope) {
		this(messages, route, temperature, maxTokens, extra, timeout, deadline, deferrable, cacheScope, List.of(), null, null);
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
		this(messages, route, temperature, maxTokens, extra, timeout, deadline, deferrable, null, List.of(), null, null);
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
		builder.tools.addAll(this.tools);
		builder.toolChoice = this.toolChoice;
		builder.priority = this.priority;
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

		private final List<Tool> tools = new ArrayList<>();

		private @Nullable ToolChoice toolChoice;

		private @Nullable Priority priority;

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

		/**
		 * Add the result of a tool call to the conversation.
		 * @param toolCallId the id of the call it answers
		 * @param name the function's name
		 * @param content the result
		 * @return this builder
		 */
		public Builder toolResult(String toolCallId, String name, String content) {
			return message(ChatMessage.tool(toolCallId, name, content));
		}

		/**
		 * Offer a function to the model.
		 * @param tool the function
		 * @return this builder
		 */
		public Builder tool(Tool tool) {
			this.tools.add(tool);
			return this;
		}

		/**
		 * Offer functions to the model.
		 * @param tools the functions
		 * @return this builder
		 */
		public Builder tools(List<Tool> tools) {
			this.tools.addAll(tools);
			return this;
		}

		/**
		 * Say whether and which tool the model must call.
		 * @param toolChoice the choice, or {@code null} for the provider's default
		 * @return this builder
		 */
		public Builder toolChoice(@Nullable ToolChoice toolChoice) {
			this.toolChoice = toolChoice;
			return this;
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

		/**
		 * Say whose call this is: a {@link Priority#BATCH} call uses at most
		 * {@code llm.gateway.batch-share} of an endpoint's capacity and yields the rest to
		 * interactive calls.
		 * @param priority the priority, or {@code null} for {@link Priority#INTERACTIVE}
		 * @return this builder
		 */
		public Builder priority(@Nullable Priority priority) {
			this.priority = priority;
			return this;
		}

		public ChatRequest build() {
			return new ChatRequest(this.messages, this.route, this.temperature, this.maxTokens, this.extra,
					this.timeout, this.deadline, this.deferrable, this.cacheScope, this.tools, this.toolChoice,
					this.priority);
		}

	}

}
