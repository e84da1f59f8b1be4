package dev.llmresilience.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import tools.jackson.databind.json.JsonMapper;

/**
 * A local OpenAI-compatible provider (a {@link FakeUpstream} server) that fails (503) each
 * prompt's first call, so that a deferrable request is deferred, and answers its later ones, its
 * background attempts, with {@code "answer to <prompt>"}, counting the calls and the answers of
 * each prompt.
 */
final class FirstCallFailsProvider implements AutoCloseable {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private final FakeUpstream upstream = FakeUpstream.of("provider");

	private final MockWebServer server = this.upstream.server("provider");

	private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> answers = new ConcurrentHashMap<>();

	FirstCallFailsProvider() {
		this.server.setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				String prompt = mapper.readTree(request.getBody().utf8()).get("messages").get(0).get("content").asString();
				if (count(FirstCallFailsProvider.this.calls, prompt) == 1) {
					return Answers.error(503, "overloaded");
				}
				count(FirstCallFailsProvider.this.answers, prompt);
				return Answers.completion("answer to " + prompt);
			}
		});
	}

	private static int count(Map<String, AtomicInteger> counts, String prompt) {
		return counts.computeIfAbsent(prompt, (key) -> new AtomicInteger()).incrementAndGet();
	}

	String baseUrl() {
		return this.server.url("/v1").toString();
	}

	/** The calls made with a prompt, the failed first one included. */
	int calls(String prompt) {
		AtomicInteger count = this.calls.get(prompt);
		return (count != null) ? count.get() : 0;
	}

	/** The calls with a prompt that were answered. */
	int answers(String prompt) {
		AtomicInteger count = this.answers.get(prompt);
		return (count != null) ? count.get() : 0;
	}

	@Override
	public void close() {
		this.upstream.close();
	}

}
