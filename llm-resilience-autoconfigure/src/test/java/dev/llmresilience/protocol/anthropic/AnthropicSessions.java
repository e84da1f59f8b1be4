package dev.llmresilience.protocol.anthropic;

import java.util.List;

import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import static dev.llmresilience.support.Answers.fixture;

/**
 * The Anthropic SDK's recorded sessions (a JSON array of exchanges, each with the request the SDK
 * sent and the response the API gave), served by a test server and compared with what it received.
 */
final class AnthropicSessions {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private AnthropicSessions() {
	}

	/**
	 * A recorded session.
	 * @param path the recording's path below {@code fixtures/}
	 * @return its exchanges
	 */
	static JsonNode read(String path) {
		return mapper.readTree(fixture(path));
	}

	/**
	 * Serve each recorded response in turn: its status, its headers (but those of the connection),
	 * its body.
	 * @param session the exchanges
	 * @param server the server
	 */
	static void serve(JsonNode session, MockWebServer server) {
		for (JsonNode exchange : session) {
			JsonNode response = exchange.get("response");
			JsonNode body = response.get("body");
			MockResponse.Builder replayed = new MockResponse.Builder().code(response.get("status_code").asInt());
			response.get("headers").properties().forEach((header) -> {
				if (!List.of("content-length", "connection", "transfer-encoding").contains(header.getKey())) {
					replayed.setHeader(header.getKey(), header.getValue().asString());
				}
			});
			server.enqueue(replayed.body(body.isString() ? body.asString() : mapper.writeValueAsString(body)).build());
		}
	}

	/**
	 * The body the SDK sent in one exchange, without the {@code caller} of the {@code tool_use} blocks
	 * it sent back: the SDK returns the API's blocks as they came, and {@code caller} (who made the
	 * call, here {@code direct}) is the API's own report, which a {@code ToolCall} does not carry and a
	 * request does not need.
	 * @param session the exchanges
	 * @param exchange which one, from 0
	 * @return the body
	 */
	static JsonNode sentBySdk(JsonNode session, int exchange) {
		JsonNode body = session.get(exchange).get("request").get("body").deepCopy();
		for (JsonNode message : body.get("messages")) {
			if (message.get("content").isArray()) {
				for (JsonNode block : message.get("content")) {
					((ObjectNode) block).remove("caller");
				}
			}
		}
		return body;
	}

	/**
	 * The body a server received.
	 * @param request the request it received
	 * @return the body as JSON
	 */
	static JsonNode body(RecordedRequest request) {
		return mapper.readTree(request.getBody().utf8());
	}

}
