package dev.llmresilience.redis;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Priority;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolChoice;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.spi.DeferredStore.DeferredEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The deferred entries' format in Redis: every request shape a caller can defer reads back equal
 * (content parts of both types, tool calls and results, tools, each tool choice, extra fields of
 * every JSON type, every field set and unset), checked on named shapes and on 500 generated ones;
 * and an entry that is not the format (not JSON, another version, a field missing or of the wrong
 * type) is refused naming the field, never quoting a value.
 */
class DeferredCodecTests {

	private static final Instant CREATED = Instant.parse("2026-12-01T10:15:30.123456789Z");

	private final DeferredCodec codec = new DeferredCodec();

	static Stream<ChatRequest> shapes() {
		return Stream.of(ChatRequest.ofUser("hello"),
				ChatRequest.builder()
					.message(ChatMessage.user(List.of(ContentPart.text("What is in "), ContentPart.text("this image?"),
							ContentPart.imageUrl("https://example.org/cat.png"),
							new ContentPart.ImageUrl("data:image/png;base64,iVBORw0KGgo=", "low"))))
					.deferrable(true)
					.build(),
				ChatRequest.builder()
					.system("You call tools.")
					.user("Weather in Paris?")
					.message(ChatMessage.assistant(null,
							List.of(new ToolCall("call_1", "weather", "{\"city\":\"Paris\"}"),
									new ToolCall("call_2", "time", "{}"))))
					.toolResult("call_1", "weather", "{\"celsius\":21}")
					.toolResult("call_2", "time", "12:00")
					.tool(Tool.function("weather", "Current weather", "{\"type\":\"object\"}"))
					.tool(new Tool("time", null, null, true))
					.toolChoice(ToolChoice.function("weather"))
					.build(),
				ChatRequest.builder()
					.message(new ChatMessage("developer", "Be brief.", List.of(), List.of(), null, "ops"))
					.user("Summarise")
					.route("cheap")
					.temperature(0.25)
					.maxTokens(300)
					.timeout(Duration.ofMillis(1500))
					.deadline(Duration.ofMinutes(2))
					.cacheScope("tenant-42")
					.toolChoice(ToolChoice.none())
					.extra("top_p", 0.9)
					.extra("seed", 7)
					.extra("big", 12345678901L)
					.extra("user", "u-1")
					.extra("logprobs", true)
					.extra("response_format", Map.of("type", "json_schema", "json_schema",
							Map.of("name", "r", "strict", true, "schema", Map.of("type", "object"))))
					.extra("stop", List.of("\n\n", "END"))
					.extra("metadata", nullValued())
					.build(),
				ChatRequest.builder().user("required").toolChoice(ToolChoice.required()).tool(Tool.function("f", null, null)).build(),
				ChatRequest.builder().user("auto").toolChoice(ToolChoice.auto()).build(),
				ChatRequest.builder().user("batch").priority(Priority.BATCH).deferrable(true).build(),
				ChatRequest.builder().user("unicode: \u00e9\u4e2d\ud83d\ude00 \"quoted\" \\ \u0000").build());
	}

	private static Map<String, Object> nullValued() {
		Map<String, Object> map = new LinkedHashMap<>();
		map.put("absent", null);
		return map;
	}

	@ParameterizedTest
	@MethodSource("shapes")
	void everyRequestShapeReadsBackEqual(ChatRequest request) {
		DeferredEntry entry = new DeferredEntry("dfr_ticket", request, DeferredResult.State.PENDING, 0, null, null,
				CREATED, CREATED.plusSeconds(3));
		assertThat(this.codec.read(this.codec.write(entry))).isEqualTo(entry);
	}

	@Test
	void generatedRequestsAndAnswersReadBackEqual() {
		Random random = new Random(22);
		for (int i = 0; i < 500; i++) {
			DeferredEntry entry = new Generator(random).entry();
			String json = this.codec.write(entry);
			assertThat(this.codec.read(json)).as(json).isEqualTo(entry);
		}
	}

	@Test
	void aCompletedEntryKeepsEveryFieldOfItsAnswer() {
		ChatResponse answer = ChatResponse.builder()
			.content("the summary")
			.endpoint("primary")
			.model("gpt-x")
			.tier(Tier.DEFERRED)
			.finishReason("tool_calls")
			.toolCalls(List.of(new ToolCall("c", "f", "{\"a\":1}")))
			.usage(new Usage(12, null))
			.cost(new BigDecimal("0.0000012340"))
			.latency(Duration.ofMillis(812))
			.attempts(List.of(new Attempt("primary", Outcome.SERVER_ERROR, Duration.ofMillis(3)),
					new Attempt("backup", Outcome.SUCCESS, Duration.ofNanos(1))))
			.ticket("dfr_ticket")
			.age(Duration.ofSeconds(9))
			.build();
		DeferredEntry entry = new DeferredEntry("dfr_ticket", ChatRequest.ofUser("q"), DeferredResult.State.COMPLETED, 2,
				answer, null, CREATED, CREATED.plusSeconds(40));
		DeferredEntry read = this.codec.read(this.codec.write(entry));
		assertThat(read).isEqualTo(entry);
		assertThat(read.response().cost()).hasToString("0.0000012340");
	}

	@Test
	void theFormatIsVersionedAndWritesEachPartsType() {
		ObjectNode json = (ObjectNode) JsonMapper.builder().build().readTree(this.codec.write(entry(shapes().toList().get(1))));
		assertThat(json.get("v").asInt()).isEqualTo(1);
		assertThat(json.get("request").get("messages").get(0).get("parts").get(0).get("type").asString()).isEqualTo("text");
		assertThat(json.get("request").get("messages").get(0).get("parts").get(2).get("type").asString())
			.isEqualTo("image_url");
	}

	@Test
	void anEntryThatIsNotTheFormatIsRefusedNamingTheField() {
		String good = this.codec.write(entry(ChatRequest.ofUser("secret prompt")));
		assertThatIllegalArgumentException().isThrownBy(() -> this.codec.read("{not json")).withMessage("it is not JSON");
		assertThatIllegalArgumentException().isThrownBy(() -> this.codec.read(good.replace("\"v\":1", "\"v\":2")))
			.withMessageContaining("format version is 2");
		assertThatIllegalArgumentException().isThrownBy(() -> this.codec.read(good.replace("\"v\":1,", "")))
			.withMessage("v is missing");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.codec.read(good.replace("\"deferrable\":false", "\"deferrable\":\"false\"")))
			.withMessage("request.deferrable is not true or false");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.codec.read(good.replace("\"role\":\"user\",", "")))
			.withMessage("request.messages[0].role is missing");
		String two = this.codec.write(entry(ChatRequest.builder().system("be brief").user("secret prompt").build()));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.codec.read(two.replace("\"role\":\"user\",", "")))
			.withMessage("request.messages[1].role is missing");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.codec.read(good.replace("\"state\":\"PENDING\"", "\"state\":\"DONE\"")))
			.withMessage("state is not one of the known values");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.codec.read(good.replace("\"priority\":\"INTERACTIVE\"", "\"priority\":\"urgent\"")))
			.withMessage("request.priority is not one of the known values");
		String parts = this.codec.write(entry(shapes().toList().get(1)));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.codec.read(parts.replaceFirst("\"type\":\"text\",", "")))
			.withMessage("request.messages[0].parts[0].type is missing");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.codec.read(good.replace("\"content\":\"secret prompt\"", "\"content\":7")))
			.withMessageNotContaining("secret");
	}

	@Test
	void anEntryWrittenWithoutAPriorityReadsAsInteractive() {
		String batch = this.codec.write(entry(ChatRequest.builder().user("q").priority(Priority.BATCH).build()));
		assertThat(batch).contains("\"priority\":\"BATCH\"");
		DeferredEntry read = this.codec.read(batch.replace("\"priority\":\"BATCH\",", ""));
		assertThat(read.request().priority()).isEqualTo(Priority.INTERACTIVE);
	}

	private static DeferredEntry entry(ChatRequest request) {
		return new DeferredEntry("dfr_ticket", request, DeferredResult.State.PENDING, 0, null, null, CREATED, CREATED);
	}

	/** Random entries over every field, each set or not. */
	private static final class Generator {

		private final Random random;

		Generator(Random random) {
			this.random = random;
		}

		DeferredEntry entry() {
			DeferredResult.State state = pick(DeferredResult.State.values());
			ChatRequest request = request();
			ChatResponse response = (state == DeferredResult.State.COMPLETED) ? response() : null;
			String reason = (state == DeferredResult.State.FAILED) ? text() : null;
			Instant created = Instant.ofEpochSecond(this.random.nextInt(2_000_000_000), this.random.nextInt(1_000_000_000));
			return new DeferredEntry("dfr_" + this.random.nextLong(), request, state, this.random.nextInt(10), response,
					reason, created, created.plusMillis(this.random.nextInt(100_000)));
		}

		private ChatRequest request() {
			ChatRequest.Builder builder = ChatRequest.builder();
			IntStream.range(0, 1 + this.random.nextInt(4)).forEach((i) -> builder.message(message()));
			List<String> names = new ArrayList<>();
			for (int i = 0; i < this.random.nextInt(3); i++) {
				String name = "tool" + i;
				names.add(name);
				builder.tool(new Tool(name, maybe(text()), maybe("{\"type\":\"object\"}"), maybe(this.random.nextBoolean())));
			}
			for (int i = 0; i < this.random.nextInt(4); i++) {
				builder.extra("x" + i, json(2));
			}
			return builder.route(maybe(text()))
				.temperature(maybe(this.random.nextDouble() * 2))
				.maxTokens(maybe(this.random.nextInt(100_000)))
				.timeout(maybe(Duration.ofMillis(1 + this.random.nextInt(100_000))))
				.deadline(maybe(Duration.ofSeconds(1 + this.random.nextInt(1000), this.random.nextInt(1000))))
				.deferrable(this.random.nextBoolean())
				.cacheScope(maybe(text()))
				.priority(maybe(pick(Priority.values())))
				.toolChoice(names.isEmpty() || this.random.nextBoolean() ? maybe(pick(new ToolChoice[] { ToolChoice.auto(),
						ToolChoice.none(), ToolChoice.required() })) : ToolChoice.function(names.get(0)))
				.build();
		}

		private ChatMessage message() {
			return switch (this.random.nextInt(5)) {
				case 0 -> new ChatMessage(pick(new String[] { "system", "developer", "user" }), text(), List.of(),
						List.of(), null, maybe(text()));
				case 1 -> ChatMessage.user(IntStream.range(0, 1 + this.random.nextInt(3))
					.mapToObj((i) -> this.random.nextBoolean() ? ContentPart.text(text())
							: (ContentPart) new ContentPart.ImageUrl("https://example.org/" + this.random.nextInt(),
									maybe(pick(new String[] { "low", "high", "auto" }))))
					.toList());
				case 2 -> new ChatMessage(ChatMessage.ASSISTANT, maybe(text()), List.of(),
						List.of(new ToolCall("call_" + this.random.nextInt(), "f", "{\"n\":" + this.random.nextInt() + "}")),
						null, null);
				case 3 -> ChatMessage.tool("call_" + this.random.nextInt(), "f", text());
				default -> ChatMessage.assistant(text());
			};
		}

		private ChatResponse response() {
			// drawn in the order of the components
			return ChatResponse.builder()
				.content(text())
				.endpoint(maybe("primary"))
				.model(maybe(text()))
				.tier(pick(Tier.values()))
				.finishReason(maybe("stop"))
				.toolCalls(this.random.nextBoolean() ? List.of() : List.of(new ToolCall("c", "f", "{}")))
				.usage(maybe(new Usage(maybe(this.random.nextInt(1000)), maybe(this.random.nextInt(1000)))))
				.cost(maybe(BigDecimal.valueOf(this.random.nextInt(1_000_000), 10)))
				.latency(Duration.ofMillis(this.random.nextInt(9999)))
				.attempts(List.of(new Attempt("primary", pick(Outcome.values()), Duration.ofNanos(this.random.nextInt()))))
				.ticket(maybe("dfr_x"))
				.age(maybe(Duration.ofSeconds(this.random.nextInt(100))))
				.build();
		}

		/** A value as a JSON reader gives it: null, a boolean, an int, a long, a double, a string, a list or a map. */
		private Object json(int depth) {
			int kind = this.random.nextInt((depth > 0) ? 8 : 6);
			return switch (kind) {
				case 0 -> nullable();
				case 1 -> this.random.nextBoolean();
				case 2 -> this.random.nextInt();
				case 3 -> Integer.MAX_VALUE + 1L + this.random.nextInt(1000);
				case 4 -> this.random.nextDouble() * 1000;
				case 5 -> text();
				case 6 -> IntStream.range(0, this.random.nextInt(3)).mapToObj((i) -> json(depth - 1)).toList();
				default -> {
					Map<String, Object> map = new LinkedHashMap<>();
					IntStream.range(0, this.random.nextInt(3)).forEach((i) -> map.put("k" + i, json(depth - 1)));
					yield map;
				}
			};
		}

		private Object nullable() {
			List<Object> holder = new ArrayList<>();
			holder.add(null);
			return holder;
		}

		private String text() {
			StringBuilder text = new StringBuilder();
			for (int i = 0; i < this.random.nextInt(12); i++) {
				text.append((char) (this.random.nextBoolean() ? 'a' + this.random.nextInt(26) : this.random.nextInt(0xD7FF)));
			}
			return text.toString();
		}

		private <T> T maybe(T value) {
			return this.random.nextBoolean() ? value : null;
		}

		private <T> T pick(T[] values) {
			return values[this.random.nextInt(values.length)];
		}

	}

}
