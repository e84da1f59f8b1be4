package dev.llmresilience.protocol.anthropic;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.protocol.anthropic.AnthropicRequest.Block;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A conversation's messages as the Messages API wants them: system and developer messages apart
 * (its {@code system} field), the rest as alternating turns of content blocks. An assistant's tool
 * calls are {@code tool_use} blocks, a {@code tool} message is a {@code tool_result} block in a user
 * turn, an image part is an {@code image} block. Consecutive messages of one role are one turn, the
 * tool results first (the API wants every result of an assistant's calls in the next turn, before
 * any text).
 */
final class AnthropicTurns {

	/** Error code of a tool call whose arguments are not a JSON object. */
	static final String INVALID_ARGUMENTS = "invalid_tool_arguments";

	/** Error code of a tool call without an id or a name. */
	static final String INVALID_CALL = "invalid_tool_call";

	/** Error code of an image {@code data:} URL that is not base64 with a media type. */
	static final String INVALID_IMAGE = "invalid_image_url";

	private static final String USER = "user";

	private static final String ASSISTANT = "assistant";

	private final JsonMapper mapper;

	private final List<String> system = new ArrayList<>();

	private final List<Turn> turns = new ArrayList<>();

	private AnthropicTurns(JsonMapper mapper) {
		this.mapper = mapper;
	}

	/**
	 * Split a conversation into its system prompt and its turns.
	 * @param messages the conversation
	 * @param mapper reads the arguments of tool calls
	 * @return the system prompt and turns
	 * @throws LlmInvalidRequestException for a tool call or an image that cannot be sent
	 */
	static AnthropicTurns of(List<ChatMessage> messages, JsonMapper mapper) {
		AnthropicTurns turns = new AnthropicTurns(mapper);
		messages.forEach(turns::add);
		turns.trimFinalAssistantTurn();
		return turns;
	}

	/**
	 * The system and developer messages' texts, joined with a blank line.
	 * @return the system prompt, or {@code null} when there is none
	 */
	@Nullable String system() {
		return this.system.isEmpty() ? null : String.join("\n\n", this.system);
	}

	/**
	 * The turns: a turn of one text block as that text, any other as its blocks.
	 * @return the turns
	 */
	List<AnthropicRequest.Message> messages() {
		return this.turns.stream().map(Turn::toWire).toList();
	}

	private void add(ChatMessage message) {
		switch (message.role()) {
			case ChatMessage.SYSTEM, "developer" -> this.system.add(message.text());
			case ChatMessage.TOOL -> turn(USER).results.add(toolResult(message));
			case ChatMessage.ASSISTANT -> {
				Turn turn = turn(ASSISTANT);
				turn.blocks.addAll(content(message));
				message.toolCalls().forEach((call) -> turn.blocks.add(toolUse(call)));
			}
			// user, and a role the API does not know, which it refuses in its own words
			default -> turn(message.role()).blocks.addAll(content(message));
		}
	}

	private Turn turn(String role) {
		Turn last = this.turns.isEmpty() ? null : this.turns.get(this.turns.size() - 1);
		if (last != null && last.role.equals(role)) {
			return last;
		}
		Turn turn = new Turn(role);
		this.turns.add(turn);
		return turn;
	}

	// Text (left out when empty: the API refuses an empty text block) and images.
	private static List<Block> content(ChatMessage message) {
		List<Block> blocks = new ArrayList<>();
		if (message.content() != null && !message.content().isEmpty()) {
			blocks.add(new AnthropicRequest.Text(message.content()));
		}
		for (ContentPart part : message.parts()) {
			if (part instanceof ContentPart.ImageUrl image) {
				blocks.add(new AnthropicRequest.Image(source(image.url())));
			}
			else if (!((ContentPart.Text) part).text().isEmpty()) {
				blocks.add(new AnthropicRequest.Text(((ContentPart.Text) part).text()));
			}
		}
		return blocks;
	}

	// A data: URL is sent inline (base64 is the only encoding the API takes); any other by its URL.
	// OpenAI's detail has no equivalent and is left out.
	private static AnthropicRequest.ImageSource source(String url) {
		if (!url.regionMatches(true, 0, "data:", 0, 5)) {
			return new AnthropicRequest.ImageSource("url", url, null, null);
		}
		int comma = url.indexOf(',');
		String header = (comma > 0) ? url.substring(5, comma) : "";
		int semicolon = header.indexOf(';');
		String mediaType = (semicolon >= 0) ? header.substring(0, semicolon) : header;
		if (comma < 0 || mediaType.isBlank() || !header.toLowerCase(Locale.ROOT).endsWith(";base64")
				|| comma == url.length() - 1) {
			throw new LlmInvalidRequestException("An image's data: URL must be data:<media type>;base64,<data> (e.g. "
					+ "data:image/png;base64,iVBOR...): Anthropic takes inline images in base64 only, so encode it, "
					+ "or give an https: URL", null, 0, INVALID_IMAGE);
		}
		return new AnthropicRequest.ImageSource("base64", null, mediaType.strip().toLowerCase(Locale.ROOT),
				url.substring(comma + 1));
	}

	private AnthropicRequest.ToolUse toolUse(ToolCall call) {
		if (call.id() == null || call.id().isBlank() || call.name() == null || call.name().isBlank()) {
			throw new LlmInvalidRequestException("An assistant message's tool call needs an id and a name (was id '"
					+ call.id() + "', name '" + call.name() + "'): send back the ToolCall as the answer gave it", null,
					0, INVALID_CALL);
		}
		return new AnthropicRequest.ToolUse(toolUseId(call.id()), call.name(), input(call));
	}

	// The arguments as the JSON object Anthropic's input is; none at all is an empty object.
	private JsonNode input(ToolCall call) {
		String arguments = call.arguments();
		if (arguments == null || arguments.isBlank()) {
			return this.mapper.createObjectNode();
		}
		try {
			JsonNode input = this.mapper.readTree(arguments);
			if (input.isObject()) {
				return input;
			}
		}
		catch (JacksonException ex) {
			// refused below
		}
		throw new LlmInvalidRequestException("The arguments of tool call '" + call.id() + "' (" + call.name()
				+ ") are not a JSON object: Anthropic takes a call's input as an object, so send back the arguments "
				+ "as the answer gave them, e.g. {\"city\":\"Paris\"}", null, 0, INVALID_ARGUMENTS);
	}

	private static AnthropicRequest.ToolResult toolResult(ChatMessage message) {
		// toolCallId is never blank here: a tool message without one cannot be made (ChatMessage).
		String id = toolUseId(String.valueOf(message.toolCallId()));
		if (!message.parts().isEmpty()) {
			return new AnthropicRequest.ToolResult(id, content(message));
		}
		// No content at all is sent as none: an empty text may be refused.
		String text = message.text();
		return new AnthropicRequest.ToolResult(id, text.isEmpty() ? null : text);
	}

	// Anthropic's ids are [a-zA-Z0-9_-]+; an id another provider gave (a route that fell back from
	// it) may hold other characters. The same id always maps to the same one, so a call and its
	// result still match.
	private static String toolUseId(String id) {
		return id.replaceAll("[^a-zA-Z0-9_-]", "_");
	}

	// A conversation that ends with an assistant turn asks Claude to continue it (a stream resumed on
	// this endpoint), and the Messages API refuses such a turn that ends in whitespace.
	private void trimFinalAssistantTurn() {
		if (this.turns.isEmpty() || !ASSISTANT.equals(this.turns.get(this.turns.size() - 1).role)) {
			return;
		}
		List<Block> blocks = this.turns.get(this.turns.size() - 1).blocks;
		if (!blocks.isEmpty() && blocks.get(blocks.size() - 1) instanceof AnthropicRequest.Text text) {
			String trimmed = text.text().stripTrailing();
			blocks.remove(blocks.size() - 1);
			if (!trimmed.isEmpty()) {
				blocks.add(new AnthropicRequest.Text(trimmed));
			}
		}
		if (blocks.isEmpty()) {
			this.turns.remove(this.turns.size() - 1);
		}
	}

	/** One turn being built: its tool results, then its other blocks. */
	private static final class Turn {

		private final String role;

		private final List<Block> results = new ArrayList<>();

		private final List<Block> blocks = new ArrayList<>();

		private Turn(String role) {
			this.role = role;
		}

		private AnthropicRequest.Message toWire() {
			List<Block> content = new ArrayList<>(this.results);
			content.addAll(this.blocks);
			if (content.size() == 1 && content.get(0) instanceof AnthropicRequest.Text text) {
				return new AnthropicRequest.Message(this.role, text.text());
			}
			// A message of only empty text: sent as it is, for the API to refuse in its own words.
			return new AnthropicRequest.Message(this.role, content.isEmpty() ? "" : content);
		}

	}

}
