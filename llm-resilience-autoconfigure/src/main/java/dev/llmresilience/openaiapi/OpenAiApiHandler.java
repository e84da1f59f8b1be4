package dev.llmresilience.openaiapi;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.regex.Pattern;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.RouteSelector;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.http.codec.ServerSentEvent;

/**
 * The OpenAI-compatible API, apart from any web stack: authenticates the client, reads its
 * chat-completions or Responses request, names the route by the request's {@code model}, calls the
 * gateway and shapes what it answers as OpenAI does. A stream's status is decided on its first chunk, so that a
 * busy answer is a 503 and not a stream; once a stream has started, a failure ends it with an
 * in-band error event.
 */
final class OpenAiApiHandler {

	private static final Pattern SAFE_REQUEST_ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");

	private static final String DONE = "[DONE]";

	private final LlmGateway gateway;

	private final EndpointRegistry endpoints;

	private final RouteSelector routeSelector;

	private final ClientKeys keys;

	private final String busyMessage;

	private final BodyLimits limits;

	private final Semaphore reads;

	private final Clock clock;

	private final OpenAiApiCodec codec = new OpenAiApiCodec();

	private final ApiReplies replies;

	private final ResponsesCodec responses = new ResponsesCodec();

	/**
	 * Create a handler.
	 * @param gateway the gateway that answers
	 * @param endpoints the endpoints and routes (a request's {@code model} names a route)
	 * @param routeSelector picks the route of a request without a {@code model}
	 * @param keys the keys clients authenticate with
	 * @param busyMessage the message of a busy answer raised as an error ({@code busy-as-error})
	 * @param limits how large a body may be and how many may be read at once
	 * @param clock the clock of the answers' {@code created} and of the breakers' waits
	 */
	public OpenAiApiHandler(LlmGateway gateway, EndpointRegistry endpoints, RouteSelector routeSelector, ClientKeys keys,
			String busyMessage, BodyLimits limits, Clock clock) {
		this.gateway = gateway;
		this.endpoints = endpoints;
		this.routeSelector = routeSelector;
		this.keys = keys;
		this.busyMessage = busyMessage;
		this.limits = limits;
		this.reads = new Semaphore(limits.maxConcurrentReads());
		this.clock = clock;
		this.replies = new ApiReplies(this.codec, new BreakerWaits(endpoints, clock));
	}

	/**
	 * The largest request body the API reads.
	 * @return the size in bytes
	 */
	public long maxRequestSize() {
		return this.limits.maxRequestSize();
	}

	/**
	 * The id of a request: the client's {@code x-request-id} when it is a short token, else a new one.
	 * @param clientId the header's value, or {@code null}
	 * @return the id to answer with
	 */
	public static String requestId(@Nullable String clientId) {
		return (clientId != null && SAFE_REQUEST_ID.matcher(clientId).matches()) ? clientId : randomId().toString();
	}

	/**
	 * Decide on a chat request from its headers, before any of its body is read: a wrong or
	 * missing key is a 401 whatever the body, a declared length over {@link #maxRequestSize()} a
	 * 413, and a request that finds as many bodies being read as the limit allows a 503. A refusal
	 * asks the web stack to close the connection; an admitted request holds a read permit until
	 * {@link ChatAdmission#bodyRead()}.
	 * @param authorization the {@code Authorization} header, or {@code null}
	 * @param contentLength the declared {@code Content-Length}, or a negative number when absent
	 * @param requestId the request's id
	 * @param priority the {@code x-llm-priority} header, or {@code null} when absent
	 * @return the admission
	 */
	public ChatAdmission admitChat(@Nullable String authorization, long contentLength, String requestId,
			@Nullable String priority) {
		if (!this.keys.accepts(authorization)) {
			return ChatAdmission.refused(requestId, ApiReplies.closing(this.replies.unauthorized(requestId)));
		}
		if (contentLength > this.limits.maxRequestSize()) {
			return ChatAdmission.refused(requestId, tooLarge(requestId));
		}
		if (!this.reads.tryAcquire()) {
			return ChatAdmission.refused(requestId,
					ApiReplies.closing(this.replies.tooManyReads(requestId, this.limits.maxConcurrentReads())));
		}
		return ChatAdmission.admitted(requestId, this.reads, priority);
	}

	/**
	 * The answer to a body larger than {@link #maxRequestSize()}, which is not read further.
	 * @param requestId the request's id
	 * @return a 413
	 */
	public OpenAiApiReply tooLarge(String requestId) {
		return ApiReplies.closing(this.replies.tooLarge(requestId, this.limits.maxRequestSize()));
	}

	/**
	 * The answer to a method and path under the base path that the API does not serve, in OpenAI's
	 * shape; the body, if any, is not read.
	 * @param requestId the request's id
	 * @param method the request's method
	 * @param path the request's path
	 * @param basePath the API's base path
	 * @return a 404
	 */
	public OpenAiApiReply notFound(String requestId, String method, String path, String basePath) {
		return ApiReplies.closing(this.replies.notFound(requestId, method, path, basePath));
	}

	/**
	 * {@code GET /models}: the routes, as the models a client may ask for.
	 * @param authorization the {@code Authorization} header, or {@code null}
	 * @param requestId the request's id
	 * @return the list, or a 401
	 */
	public OpenAiApiReply models(@Nullable String authorization, String requestId) {
		if (!this.keys.accepts(authorization)) {
			return this.replies.unauthorized(requestId);
		}
		byte[] body = this.codec.models(List.copyOf(this.endpoints.routeNames().keySet()), "llm-resilience");
		return new OpenAiApiReply(200, Map.of(ApiReplies.REQUEST_ID, requestId), body, null);
	}

	/**
	 * {@code POST /chat/completions}, once {@link #admitChat admitted} and its body read.
	 * @param admission the admission, which authenticated the client
	 * @param body the request body, at most {@link #maxRequestSize()} bytes
	 * @return the reply; for a stream, once its first chunk (or its failure) is known
	 */
	public Mono<OpenAiApiReply> chatCompletions(ChatAdmission admission, byte[] body) {
		String requestId = admission.requestId();
		if (admission.refusal() != null) {
			return Mono.just(admission.refusal());
		}
		OpenAiApiRequest read;
		try {
			read = this.codec.read(body, admission.priority());
		}
		catch (WireFormatException ex) {
			return Mono.just(this.replies.badRequest(requestId, ex.getMessage(), ex.param(), null));
		}
		ChatRequest request = read.request();
		String route = (request.route() != null) ? request.route() : this.routeSelector.select(request);
		if (this.endpoints.route(route) == null) {
			return Mono.just(this.replies.unknownModel(requestId, route, this.endpoints.routeNames().keySet()));
		}
		ChatRequest routed = request.toBuilder().route(route).build();
		return read.stream() ? stream(requestId, route, routed, read.includeUsage()) : chat(requestId, route, routed);
	}

	/**
	 * {@code POST /responses}, once {@link #admitChat admitted} and its body read: the same gateway,
	 * routes, headers and busy answers as {@link #chatCompletions}, in the Responses API's format.
	 * @param admission the admission, which authenticated the client
	 * @param body the request body, at most {@link #maxRequestSize()} bytes
	 * @return the reply; for a stream, once its first chunk (or its failure) is known
	 */
	public Mono<OpenAiApiReply> responses(ChatAdmission admission, byte[] body) {
		String requestId = admission.requestId();
		if (admission.refusal() != null) {
			return Mono.just(admission.refusal());
		}
		ResponsesRequest read;
		try {
			read = this.responses.read(body, admission.priority());
		}
		catch (WireFormatException ex) {
			return Mono.just(this.replies.badRequest(requestId, ex.getMessage(), ex.param(), null));
		}
		ChatRequest request = read.request();
		String route = (request.route() != null) ? request.route() : this.routeSelector.select(request);
		if (this.endpoints.route(route) == null) {
			return Mono.just(this.replies.unknownModel(requestId, route, this.endpoints.routeNames().keySet()));
		}
		ChatRequest routed = request.toBuilder().route(route).build();
		if (read.stream()) {
			return stream(requestId, route, routed, (first, chunks) -> new ResponsesEvents(this.responses,
					head(route, first.endpoint(), null, read), OpenAiApiHandler::hexId)
				.events(chunks, (error) -> ApiReplies.streamErrorMessage(requestId, error)));
		}
		return this.gateway.chat(routed)
			.map((response) -> (response.tier() == Tier.BUSY) ? busy(requestId, route, response)
					: new OpenAiApiReply(200, ApiReplies.answered(requestId, response),
							this.responses.response(head(route, response.endpoint(), response.model(), read), response,
									"msg_" + hexId(), response.toolCalls().stream().map((call) -> "fc_" + hexId()).toList()),
							null))
			.onErrorResume((error) -> Mono.just(this.replies.failure(requestId, route, error, this.busyMessage)));
	}

	private ResponsesCodec.Head head(String route, @Nullable String endpoint, @Nullable String model,
			ResponsesRequest request) {
		return new ResponsesCodec.Head("resp_" + hexId(), now(), modelOf(route, endpoint, model), request);
	}

	private Mono<OpenAiApiReply> chat(String requestId, String route, ChatRequest request) {
		return this.gateway.chat(request)
			.map((response) -> (response.tier() == Tier.BUSY) ? busy(requestId, route, response)
					: new OpenAiApiReply(200, ApiReplies.answered(requestId, response),
							this.codec.completion(completionId(), now(), modelOf(route, response.endpoint(), response.model()),
									response),
							null))
			.onErrorResume((error) -> Mono.just(this.replies.failure(requestId, route, error, this.busyMessage)));
	}

	private OpenAiApiReply busy(String requestId, String route, ChatResponse response) {
		return this.replies.busy(requestId, route, response.content(), ChatResponse.CONTENT_FILTER.equals(response.finishReason()));
	}

	/**
	 * Waits for the stream's first chunk to choose the status: a busy chunk or an early failure is
	 * an error answer; anything else starts a 200 stream that replays the first chunk and goes on.
	 * The source is kept running after the decision ({@code cancelSourceOnComplete=false}) for the
	 * web stack to subscribe to the events.
	 */
	private Mono<OpenAiApiReply> stream(String requestId, String route, ChatRequest request, boolean includeUsage) {
		return stream(requestId, route, request, (first, chunks) -> events(requestId,
				modelOf(route, first.endpoint(), null), chunks, includeUsage));
	}

	private Mono<OpenAiApiReply> stream(String requestId, String route, ChatRequest request,
			BiFunction<ChatChunk, Flux<ChatChunk>, Flux<ServerSentEvent<String>>> events) {
		return this.gateway.stream(request).switchOnFirst((first, chunks) -> {
			if (first.hasValue()) {
				ChatChunk chunk = first.get();
				if (chunk.tier() == Tier.BUSY) {
					return Mono.just(this.replies.busy(requestId, route, chunk.content(),
							ChatResponse.CONTENT_FILTER.equals(chunk.finishReason())));
				}
				return Mono.just(new OpenAiApiReply(200,
						ApiReplies.tierHeaders(requestId, chunk.tier().name(), chunk.endpoint()),
						null, events.apply(chunk, chunks)));
			}
			Throwable error = (first.getThrowable() != null) ? first.getThrowable()
					: new IllegalStateException("The gateway's stream ended without a chunk");
			return Mono.just(this.replies.failure(requestId, route, error, this.busyMessage));
		}, false).singleOrEmpty();
	}

	private Flux<ServerSentEvent<String>> events(String requestId, String model, Flux<ChatChunk> chunks,
			boolean includeUsage) {
		String id = completionId();
		long created = now();
		AtomicBoolean first = new AtomicBoolean(true);
		AtomicReference<Usage> usage = new AtomicReference<>();
		Flux<String> data = chunks.map((chunk) -> {
			if (chunk.usage() != null) {
				usage.set(chunk.usage());
			}
			return this.codec.chunk(id, created, model, chunk, first.getAndSet(false));
		});
		Flux<String> tail = Flux.defer(() -> includeUsage
				? Flux.just(this.codec.usageChunk(id, created, model, usage.get()), DONE) : Flux.just(DONE));
		return data.concatWith(tail)
			.onErrorResume((error) -> Flux.just(this.replies.streamError(requestId, error)))
			.map((json) -> ServerSentEvent.builder(json).build());
	}

	/** The answering endpoint's model as the provider named it, else as configured, else the route. */
	private String modelOf(String route, @Nullable String endpoint, @Nullable String answered) {
		if (answered != null) {
			return answered;
		}
		LlmEndpoint served = (endpoint != null) ? this.endpoints.endpoint(endpoint) : null;
		return (served != null) ? served.settings().upstream().model() : route;
	}

	private long now() {
		return this.clock.instant().getEpochSecond();
	}

	private static String completionId() {
		return "chatcmpl-" + hexId();
	}

	private static String hexId() {
		return randomId().toString().replace("-", "");
	}

	/**
	 * A version 4 UUID from {@link ThreadLocalRandom}: these ids are handles, not secrets, and they are
	 * made on event loops, where {@link UUID#randomUUID()} would read {@code /dev/urandom} behind one
	 * JVM-wide lock.
	 */
	private static UUID randomId() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		long most = (random.nextLong() & ~0xF000L) | 0x4000L;
		long least = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
		return new UUID(most, least);
	}

}
