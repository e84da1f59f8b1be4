package dev.llmresilience.chat;

import java.io.Serializable;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What the gateway answered. Serializable, so that an application cache that stores by value
 * (JDK serialization, as Redis does by default) can keep it for the CACHED tier.
 * <p>
 * Build one with {@link #builder()} (or change one with {@link #toBuilder()}), which names every
 * component and gives those left unset their defaults; the canonical constructor is public only
 * because a record's must be.
 *
 * @param content the answer's text; for {@link Tier#BUSY} the busy message
 * @param endpoint the endpoint that answered, or {@code null} when none did
 * @param model the model that answered, as the provider named it, or {@code null}
 * @param tier how the answer was obtained
 * @param finishReason why the model stopped ({@code stop}, {@code length}, {@code tool_calls}, ...), or {@code null}
 * @param toolCalls the functions the model asked to call; empty when none
 * @param usage token counts, or {@code null} when the provider reported none
 * @param cost the price of the call from the endpoint's {@code price}, or {@code null}
 * @param latency from the gateway call's start to this answer
 * @param attempts every attempt made or refused, in order
 * @param ticket the deferred request's ticket for {@link Tier#DEFERRED} (and on the answer a
 * deferred request completed with), else {@code null}
 * @param age for {@link Tier#CACHED}, how old the cached answer is; else {@code null}
 */
public record ChatResponse(String content, @Nullable String endpoint, @Nullable String model, Tier tier,
		@Nullable String finishReason, List<ToolCall> toolCalls, @Nullable Usage usage, @Nullable BigDecimal cost,
		Duration latency, List<Attempt> attempts, @Nullable String ticket, @Nullable Duration age) implements Serializable {

	/**
	 * The {@link #finishReason()} of an answer a provider's content filter blocked, and of the
	 * {@link Tier#BUSY} answer when every endpoint's filter blocked the request.
	 */
	public static final String CONTENT_FILTER = "content_filter";

	/**
	 * Every component in order, as a record's canonical constructor must take them, and public only
	 * because a record's must be: build a response with {@link #builder()}, which names each one.
	 */
	public ChatResponse {
		toolCalls = List.copyOf(toolCalls);
		attempts = List.copyOf(attempts);
	}

	/**
	 * A builder of a response, every component at its default until set (see {@link Builder}).
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * A builder that starts from this response's components.
	 * @return the builder
	 */
	public Builder toBuilder() {
		Builder builder = new Builder();
		builder.content = this.content;
		builder.endpoint = this.endpoint;
		builder.model = this.model;
		builder.tier = this.tier;
		builder.finishReason = this.finishReason;
		builder.toolCalls = this.toolCalls;
		builder.usage = this.usage;
		builder.cost = this.cost;
		builder.latency = this.latency;
		builder.attempts = this.attempts;
		builder.ticket = this.ticket;
		builder.age = this.age;
		return builder;
	}

	/**
	 * The answer as an assistant message, to send back in the conversation; when the model called
	 * tools, follow it with one {@link ChatMessage#tool} result per call.
	 * @return the message
	 */
	public ChatMessage toMessage() {
		return this.toolCalls.isEmpty() ? ChatMessage.assistant(this.content)
				: ChatMessage.assistant(this.content, this.toolCalls);
	}

	/**
	 * Whether the answer is anything but the route's first choice.
	 * @return true for every tier but {@link Tier#PRIMARY}
	 */
	public boolean isDegraded() {
		return this.tier != Tier.PRIMARY;
	}

	@Override
	public String toString() {
		// the ticket is a bearer token for the deferred answer, and a toString ends up in logs
		return "ChatResponse[content=" + this.content + ", endpoint=" + this.endpoint + ", model=" + this.model
				+ ", tier=" + this.tier + ", finishReason=" + this.finishReason + ", toolCalls=" + this.toolCalls
				+ ", usage=" + this.usage + ", cost=" + this.cost + ", latency=" + this.latency + ", attempts="
				+ this.attempts + ", ticket=" + ((this.ticket != null) ? "(hidden)" : null) + ", age=" + this.age + "]";
	}

	/**
	 * Builds a {@link ChatResponse}. The defaults of what is left unset: {@code content} {@code ""},
	 * no {@code endpoint}, no {@code model}, {@code tier} {@link Tier#PRIMARY}, no
	 * {@code finishReason}, no {@code toolCalls} (an empty list), no {@code usage}, no {@code cost},
	 * {@code latency} {@link Duration#ZERO}, no {@code attempts} (an empty list), no {@code ticket}
	 * and no {@code age}.
	 */
	public static final class Builder {

		private String content = "";

		private @Nullable String endpoint;

		private @Nullable String model;

		private Tier tier = Tier.PRIMARY;

		private @Nullable String finishReason;

		private List<ToolCall> toolCalls = List.of();

		private @Nullable Usage usage;

		private @Nullable BigDecimal cost;

		private Duration latency = Duration.ZERO;

		private List<Attempt> attempts = List.of();

		private @Nullable String ticket;

		private @Nullable Duration age;

		private Builder() {
		}

		/**
		 * The answer's text; for {@link Tier#BUSY} the busy message.
		 * @param content the text
		 * @return this builder
		 */
		public Builder content(String content) {
			this.content = content;
			return this;
		}

		/**
		 * The endpoint that answered.
		 * @param endpoint its name, or {@code null} when none did
		 * @return this builder
		 */
		public Builder endpoint(@Nullable String endpoint) {
			this.endpoint = endpoint;
			return this;
		}

		/**
		 * The model that answered, as the provider named it.
		 * @param model the model, or {@code null}
		 * @return this builder
		 */
		public Builder model(@Nullable String model) {
			this.model = model;
			return this;
		}

		/**
		 * How the answer was obtained.
		 * @param tier the tier
		 * @return this builder
		 */
		public Builder tier(Tier tier) {
			this.tier = tier;
			return this;
		}

		/**
		 * Why the model stopped.
		 * @param finishReason {@code stop}, {@code length}, {@code tool_calls}, ..., or {@code null}
		 * @return this builder
		 */
		public Builder finishReason(@Nullable String finishReason) {
			this.finishReason = finishReason;
			return this;
		}

		/**
		 * The functions the model asked to call.
		 * @param toolCalls the calls, empty for none
		 * @return this builder
		 */
		public Builder toolCalls(List<ToolCall> toolCalls) {
			this.toolCalls = toolCalls;
			return this;
		}

		/**
		 * The token counts.
		 * @param usage the counts, or {@code null} when the provider reported none
		 * @return this builder
		 */
		public Builder usage(@Nullable Usage usage) {
			this.usage = usage;
			return this;
		}

		/**
		 * The price of the call from the endpoint's {@code price}.
		 * @param cost the price, or {@code null}
		 * @return this builder
		 */
		public Builder cost(@Nullable BigDecimal cost) {
			this.cost = cost;
			return this;
		}

		/**
		 * The time from the gateway call's start to this answer.
		 * @param latency the time
		 * @return this builder
		 */
		public Builder latency(Duration latency) {
			this.latency = latency;
			return this;
		}

		/**
		 * Every attempt made or refused, in order.
		 * @param attempts the attempts
		 * @return this builder
		 */
		public Builder attempts(List<Attempt> attempts) {
			this.attempts = attempts;
			return this;
		}

		/**
		 * The deferred request's ticket, for {@link Tier#DEFERRED} and on the answer a deferred
		 * request completed with.
		 * @param ticket the ticket, or {@code null}
		 * @return this builder
		 */
		public Builder ticket(@Nullable String ticket) {
			this.ticket = ticket;
			return this;
		}

		/**
		 * For {@link Tier#CACHED}, how old the cached answer is.
		 * @param age the age, or {@code null}
		 * @return this builder
		 */
		public Builder age(@Nullable Duration age) {
			this.age = age;
			return this;
		}

		/**
		 * The response.
		 * @return a new response of the components set, and the defaults of the others
		 */
		public ChatResponse build() {
			return new ChatResponse(this.content, this.endpoint, this.model, this.tier, this.finishReason,
					this.toolCalls, this.usage, this.cost, this.latency, this.attempts, this.ticket, this.age);
		}

	}

}
