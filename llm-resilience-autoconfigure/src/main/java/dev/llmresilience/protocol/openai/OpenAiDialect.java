package dev.llmresilience.protocol.openai;

/**
 * Where an OpenAI-format client sends its requests and what their body carries: the plain
 * chat-completions API ({@link #OPENAI}), or a provider's variant of it, such as Azure OpenAI's
 * deployment API, whose requests and answers are the same JSON and server-sent events.
 *
 * @param path the path below the base URL, query included
 * @param sendsModel whether the body names the model (Azure's deployment path names it instead)
 * @param streamUsage whether a streamed request asks for {@code stream_options.include_usage}
 * (older API versions of some providers refuse the field)
 */
record OpenAiDialect(String path, boolean sendsModel, boolean streamUsage) {

	/** OpenAI's own API and every compatible one: {@code POST /chat/completions}. */
	public static final OpenAiDialect OPENAI = new OpenAiDialect("/chat/completions", true, true);

}
