package dev.llmresilience.engine;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A local OpenAI-compatible provider (a {@link FakeUpstream} server) that fails (503) until healed,
 * then answers each prompt with {@code "answer to <prompt>"}, counting the answers it gave.
 */
final class SwitchableProvider implements AutoCloseable {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private final FakeUpstream upstream = FakeUpstream.of("provider");

	private final MockWebServer server = this.upstream.server("provider");

	private final AtomicBoolean healthy = new AtomicBoolean();

	private final AtomicInteger answers = new AtomicInteger();

	SwitchableProvider() {
		this.server.setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				if (!SwitchableProvider.this.healthy.get()) {
					return Answers.error(503, "overloaded");
				}
				SwitchableProvider.this.answers.incrementAndGet();
				JsonNode body = mapper.readTree(request.getBody().utf8());
				String prompt = body.get("messages").get(0).get("content").asString();
				return Answers.completion("answer to " + prompt);
			}
		});
	}

	String baseUrl() {
		return this.server.url("/v1").toString();
	}

	void heal() {
		this.healthy.set(true);
	}

	int answers() {
		return this.answers.get();
	}

	int requests() {
		return this.server.getRequestCount();
	}

	@Override
	public void close() {
		this.upstream.close();
	}

}
