package dev.llmresilience.chat;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What a message may hold: text or parts, an assistant's tool calls with or without text, a tool
 * result tied to its call; and what it may not.
 */
class ChatMessageTests {

	private static final ToolCall CALL = new ToolCall("call_1", "lookup", "{\"q\":\"x\"}");

	@Test
	void textMessagesKeepTheirFactoriesAndConstructor() {
		assertThat(ChatMessage.user("hi")).isEqualTo(new ChatMessage("user", "hi"));
		assertThat(ChatMessage.system("be brief").role()).isEqualTo("system");
		assertThat(ChatMessage.assistant("hello").text()).isEqualTo("hello");
		assertThat(ChatMessage.user("hi").parts()).isEmpty();
		assertThat(ChatMessage.user("hi").toolCalls()).isEmpty();
	}

	@Test
	void anAssistantMessageWithOnlyToolCallsHasNullContent() {
		ChatMessage message = ChatMessage.assistant("", List.of(CALL));
		assertThat(message.content()).isNull();
		assertThat(message.text()).isEmpty();
		assertThat(message.toolCalls()).containsExactly(CALL);
	}

	@Test
	void aToolResultNamesItsCallAndFunction() {
		ChatMessage result = ChatMessage.tool("call_1", "lookup", "{\"answer\":42}");
		assertThat(result.role()).isEqualTo("tool");
		assertThat(result.toolCallId()).isEqualTo("call_1");
		assertThat(result.name()).isEqualTo("lookup");
		assertThat(result.content()).isEqualTo("{\"answer\":42}");
	}

	@Test
	void partsJoinTheirTextAndKeepTheirImages() {
		ChatMessage message = ChatMessage.user(List.of(ContentPart.text("What is "), ContentPart.imageUrl("https://x/y.png"),
				ContentPart.text("this?")));
		assertThat(message.content()).isNull();
		assertThat(message.text()).isEqualTo("What is this?");
		assertThat(message.parts()).contains(new ContentPart.ImageUrl("https://x/y.png", null));
	}

	@Test
	void refusesMessagesTheWireFormatCannotCarry() {
		assertThatIllegalArgumentException().isThrownBy(() -> new ChatMessage("user", null, List.of(), List.of(), null, null))
			.withMessageContaining("needs content");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ChatMessage("user", "hi", List.of(ContentPart.text("hi")), List.of(), null, null))
			.withMessageContaining("not both");
		assertThatIllegalArgumentException().isThrownBy(() -> new ChatMessage("user", "hi", List.of(), List.of(CALL), null, null))
			.withMessageContaining("Only an assistant");
		assertThatIllegalArgumentException().isThrownBy(() -> new ChatMessage("tool", "42", List.of(), List.of(), null, null))
			.withMessageContaining("toolCallId");
	}

	@Test
	void aResponseBecomesTheAssistantMessageToSendBack() {
		ChatResponse calls = ChatResponse.builder()
			.endpoint("primary")
			.model("m")
			.finishReason("tool_calls")
			.toolCalls(List.of(CALL))
			.build();
		assertThat(calls.toMessage()).isEqualTo(ChatMessage.assistant(null, List.of(CALL)));
		ChatResponse text = ChatResponse.builder().content("Hi.").endpoint("primary").model("m").finishReason("stop").build();
		assertThat(text.toMessage()).isEqualTo(ChatMessage.assistant("Hi."));
	}

	@Test
	void requestsKeepToolsAndToolChoiceThroughToBuilder() {
		Tool tool = Tool.function("lookup", "Looks up", "{\"type\":\"object\"}");
		ChatRequest request = ChatRequest.builder().user("hi").tool(tool).toolChoice(ToolChoice.required()).build();
		ChatRequest copy = request.toBuilder().build();
		assertThat(copy.tools()).containsExactly(tool);
		assertThat(copy.toolChoice()).isEqualTo(ToolChoice.required());
		assertThatIllegalArgumentException().isThrownBy(() -> ChatRequest.builder().user("hi").tool(tool).tool(tool).build())
			.withMessageContaining("distinct");
		assertThatIllegalArgumentException().isThrownBy(() -> new ToolChoice(ToolChoice.Mode.FUNCTION, null));
	}

}
