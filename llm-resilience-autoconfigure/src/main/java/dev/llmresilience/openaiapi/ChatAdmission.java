package dev.llmresilience.openaiapi;

import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * What the OpenAI-compatible API decided about a chat request from its headers alone, before a byte
 * of its body is read: either a refusal to answer at once (the web stack then closes the
 * connection rather than read or drain the body), or leave to read the body, holding one of the
 * permits that bound how many bodies are read at once until {@link #bodyRead()}, and keeping the
 * request's {@code x-llm-priority} header to be read with the body.
 */
final class ChatAdmission {

	private final String requestId;

	private final @Nullable OpenAiApiReply refusal;

	private final @Nullable Semaphore reads;

	private final @Nullable String priority;

	private final AtomicBoolean released = new AtomicBoolean();

	private ChatAdmission(String requestId, @Nullable OpenAiApiReply refusal, @Nullable Semaphore reads,
			@Nullable String priority) {
		this.requestId = requestId;
		this.refusal = refusal;
		this.reads = reads;
		this.priority = priority;
	}

	static ChatAdmission refused(String requestId, OpenAiApiReply refusal) {
		return new ChatAdmission(requestId, refusal, null, null);
	}

	static ChatAdmission admitted(String requestId, Semaphore reads, @Nullable String priority) {
		return new ChatAdmission(requestId, null, reads, priority);
	}

	/**
	 * The request's id.
	 * @return the id to answer with
	 */
	public String requestId() {
		return this.requestId;
	}

	/**
	 * The answer to send without reading the body.
	 * @return the refusal, or {@code null} when the body may be read
	 */
	public @Nullable OpenAiApiReply refusal() {
		return this.refusal;
	}

	/**
	 * The request's {@code x-llm-priority} header, read with its body.
	 * @return the header's value, or {@code null} when absent
	 */
	@Nullable String priority() {
		return this.priority;
	}

	/**
	 * Give back the permit to read a body: once the body is read, or its reading failed or was
	 * cancelled. Calling it again, or on a refusal, does nothing.
	 */
	public void bodyRead() {
		if (this.reads != null && this.released.compareAndSet(false, true)) {
			this.reads.release();
		}
	}

}
