package dev.llmresilience.chat;

import java.io.Serializable;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What the gateway answered. Serializable, so that an application cache that stores by value
 * (JDK serialization, as Redis does by default) can keep it for the CACHED tier.
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

	public ChatResponse {
		toolCalls = List.copyOf(toolCalls);
		attempts = List.copyOf(attempts);
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

}
