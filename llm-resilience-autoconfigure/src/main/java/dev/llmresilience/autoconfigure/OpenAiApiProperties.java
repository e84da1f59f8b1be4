package dev.llmresilience.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * The OpenAI-compatible HTTP API, under {@code llm.openai-api}: other services (Python, Node, a
 * notebook) call the gateway by pointing an OpenAI SDK's base URL at this application.
 */
@ConfigurationProperties("llm.openai-api")
public class OpenAiApiProperties {

	/**
	 * Whether the application serves POST {base-path}/chat/completions (and GET {base-path}/models)
	 * through the gateway, in a WebFlux or a Servlet application.
	 */
	private boolean enabled = false;

	/** Path under which the API is served: clients use http(s)://host:port{base-path} as their base URL. */
	private String basePath = "/v1";

	/**
	 * Keys the API's clients send as "Authorization: Bearer <key>". Required when enabled. Compared in
	 * constant time, never logged or shown; the upstream providers' keys are never sent to clients.
	 */
	private List<String> apiKeys = new ArrayList<>();

	/**
	 * Largest request body read; a larger one is refused with 413 request_too_large, at once when
	 * its Content-Length says so, else as soon as more has arrived, and its connection closed.
	 */
	private DataSize maxRequestSize = DataSize.ofMegabytes(4);

	/**
	 * How many request bodies are read at once, across all clients. A request that finds this many
	 * being read is refused with 503 too_many_concurrent_reads and "retry-after: 1" without reading
	 * its body, so that slow clients can make the API hold at most this many times
	 * max-request-size (128MB by default). Clients with a wrong key are refused before they count.
	 */
	private int maxConcurrentBodyReads = 32;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getBasePath() {
		return this.basePath;
	}

	public void setBasePath(String basePath) {
		this.basePath = basePath;
	}

	public List<String> getApiKeys() {
		return this.apiKeys;
	}

	public void setApiKeys(List<String> apiKeys) {
		this.apiKeys = apiKeys;
	}

	public DataSize getMaxRequestSize() {
		return this.maxRequestSize;
	}

	public void setMaxRequestSize(DataSize maxRequestSize) {
		this.maxRequestSize = maxRequestSize;
	}

	public int getMaxConcurrentBodyReads() {
		return this.maxConcurrentBodyReads;
	}

	public void setMaxConcurrentBodyReads(int maxConcurrentBodyReads) {
		this.maxConcurrentBodyReads = maxConcurrentBodyReads;
	}

	@Override
	public String toString() {
		return "OpenAiApiProperties[enabled=" + this.enabled + ", basePath=" + this.basePath + ", apiKeys="
				+ this.apiKeys.size() + " redacted, maxRequestSize=" + this.maxRequestSize
				+ ", maxConcurrentBodyReads=" + this.maxConcurrentBodyReads + "]";
	}

}
