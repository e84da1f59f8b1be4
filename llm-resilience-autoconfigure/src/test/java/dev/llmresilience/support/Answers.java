package dev.llmresilience.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import okio.BufferedSink;
import okio.Okio;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What a {@link FakeUpstream} server answers, in OpenAI's words ({@link Wire} has them in every
 * protocol's): completions, JSON and error statuses, recorded fixtures, and SSE streams that end
 * cleanly, get cut or stall after a given event. Delays, hangs and cut connections are
 * MockWebServer's own ({@code headersDelay}, {@code bodyDelay}, {@code onResponseStart}); a call held
 * open until the test says so is a {@link FakeUpstream.Gate}.
 */
public final class Answers {

	/** The end of every well-formed OpenAI stream. */
	public static final String DONE = "data: [DONE]\n\n";

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private Answers() {
	}

	/**
	 * A successful completion whose message has the given content.
	 * @param content the content
	 * @return the response
	 */
	public static MockResponse completion(String content) {
		return json(200, completionBody(content));
	}

	/**
	 * A provider that answers every request with {@link #completion(String)}.
	 * @param content the content of every answer
	 * @return the dispatcher
	 */
	public static Dispatcher answering(String content) {
		return new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return completion(content);
			}
		};
	}

	/**
	 * The body of {@link #completion(String)}: model {@code served-model}, 5 prompt and 2 completion
	 * tokens.
	 * @param content the content
	 * @return the JSON
	 */
	public static String completionBody(String content) {
		return completionBody("served-model", content, 5, 2);
	}

	/**
	 * A successful completion from a named model with the given usage.
	 * @param model the model the provider says answered
	 * @param content the content
	 * @param promptTokens prompt tokens
	 * @param completionTokens completion tokens
	 * @return the response
	 */
	public static MockResponse completion(String model, String content, int promptTokens, int completionTokens) {
		return json(200, completionBody(model, content, promptTokens, completionTokens));
	}

	private static String completionBody(String model, String content, int promptTokens, int completionTokens) {
		return "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":" + mapper.writeValueAsString(model)
				+ ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
				+ mapper.writeValueAsString(content) + "},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":"
				+ promptTokens + ",\"completion_tokens\":" + completionTokens + ",\"total_tokens\":"
				+ (promptTokens + completionTokens) + "}}";
	}

	/**
	 * A JSON response.
	 * @param status the status
	 * @param body the body
	 * @return the response
	 */
	public static MockResponse json(int status, String body) {
		return new MockResponse.Builder().code(status).setHeader("Content-Type", "application/json").body(body).build();
	}

	/**
	 * A status with an OpenAI-style error body.
	 * @param status the status
	 * @param code the error's code
	 * @return the response
	 */
	public static MockResponse error(int status, String code) {
		return json(status, "{\"error\":{\"message\":\"upstream said " + status + "\",\"type\":\"server_error\",\"param\":null,"
				+ "\"code\":\"" + code + "\"}}");
	}

	/**
	 * An error status whose message repeats the key it was sent, as a careless provider or proxy
	 * might: what a test then finds of the key came through the starter.
	 * @param status the status
	 * @param key the key to repeat
	 * @return the response
	 */
	public static MockResponse errorEchoing(int status, String key) {
		return json(status, "{\"error\":{\"message\":\"upstream says " + status + " to Authorization: Bearer " + key
				+ " (key " + key + ")\",\"type\":\"server_error\",\"code\":null}}");
	}

	/**
	 * A fixture from {@code src/test/resources/fixtures}.
	 * @param path the path below {@code fixtures/}
	 * @return its text
	 */
	public static String fixture(String path) {
		try (InputStream in = Answers.class.getResourceAsStream("/fixtures/" + path)) {
			if (in == null) {
				throw new IllegalArgumentException("No fixture " + path);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * A recorded stream of {@code src/test/resources/fixtures/stream}.
	 * @param name the file name
	 * @return its text
	 */
	public static String streamFixture(String name) {
		return fixture("stream/" + name);
	}

	/**
	 * The response of an openai-dotnet session record: its first entry's status and body.
	 * @param path the record's path below {@code fixtures/}
	 * @return the response
	 */
	public static MockResponse recorded(String path) {
		JsonNode entry = mapper.readTree(fixture(path)).get("Entries").get(0);
		return json(entry.get("StatusCode").asInt(), mapper.writeValueAsString(entry.get("ResponseBody")));
	}

	/**
	 * A 200 {@code text/event-stream} response with a body sent whole.
	 * @param body the SSE text
	 * @return the response
	 */
	public static MockResponse sse(String body) {
		return new MockResponse.Builder().code(200).setHeader("Content-Type", "text/event-stream").body(body).build();
	}

	/**
	 * A 200 {@code text/event-stream} response, chunked, that sends {@code events} one by one and then
	 * ends as {@code ending} says.
	 * @param ending how the body ends
	 * @param stall released to end a {@link Ending#STALL} (the body is then cut)
	 * @param events the events, each a full SSE event
	 * @return the response
	 */
	public static MockResponse sse(Ending ending, CountDownLatch stall, String... events) {
		// The handler gets the raw socket after the headers, so the test decides exactly where the
		// body stops: after the last chunk, or in the middle with the connection closed.
		return new MockResponse.Builder().code(200)
			.setHeader("Content-Type", "text/event-stream")
			.removeHeader("Content-Length")
			.setHeader("Transfer-Encoding", "chunked")
			.socketHandler((socket) -> {
				try (BufferedSink sink = Okio.buffer(socket.getSink())) {
					for (String event : events) {
						byte[] bytes = event.getBytes(StandardCharsets.UTF_8);
						sink.writeUtf8(Integer.toHexString(bytes.length)).writeUtf8("\r\n").write(bytes).writeUtf8("\r\n");
						sink.flush();
					}
					if (ending == Ending.STALL) {
						stall.await(20, TimeUnit.SECONDS);
					}
					if (ending == Ending.CLEAN) {
						sink.writeUtf8("0\r\n\r\n").flush();
					}
				}
				catch (IOException ex) {
					// the client went away first
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				finally {
					socket.cancel();
				}
			})
			.build();
	}

	/** How a chunked test body ends. */
	public enum Ending {

		/** The last chunk is sent: the body ends normally. */
		CLEAN,

		/** The connection closes before the body's last chunk. */
		CUT,

		/** Nothing more is sent until the test releases it. */
		STALL

	}

	/**
	 * An SSE event with one content delta.
	 * @param content the text
	 * @return the event
	 */
	public static String content(String content) {
		return event(Map.of("choices", List.of(Map.of("index", 0, "delta", Map.of("content", content)))));
	}

	/**
	 * The SSE event with the role, and empty content, that opens OpenAI's streams.
	 * @return the event
	 */
	public static String role() {
		return event(Map.of("choices",
				List.of(Map.of("index", 0, "delta", Map.of("role", "assistant", "content", "")))));
	}

	/**
	 * An SSE event with a finish reason.
	 * @param reason the reason
	 * @return the event
	 */
	public static String finish(String reason) {
		return event(Map.of("choices", List.of(Map.of("index", 0, "delta", Map.of(), "finish_reason", reason))));
	}

	/**
	 * The final usage event.
	 * @param prompt prompt tokens
	 * @param completion completion tokens
	 * @return the event
	 */
	public static String usage(int prompt, int completion) {
		return event(Map.of("choices", List.of(), "usage", Map.of("prompt_tokens", prompt, "completion_tokens",
				completion, "total_tokens", prompt + completion)));
	}

	/**
	 * A whole, well-formed stream of the given text deltas.
	 * @param contents the deltas
	 * @return the SSE text
	 */
	public static String stream(String... contents) {
		StringBuilder body = new StringBuilder(role());
		for (String content : contents) {
			body.append(content(content));
		}
		return body.append(finish("stop")).append(usage(5, contents.length)).append(DONE).toString();
	}

	private static String event(Map<String, Object> data) {
		Map<String, Object> chunk = new LinkedHashMap<>();
		chunk.put("id", "chatcmpl-test");
		chunk.put("object", "chat.completion.chunk");
		chunk.putAll(data);
		return "data: " + mapper.writeValueAsString(chunk) + "\n\n";
	}

}
