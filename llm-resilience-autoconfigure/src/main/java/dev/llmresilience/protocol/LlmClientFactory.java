package dev.llmresilience.protocol;

/**
 * Creates the {@link LlmClient}s of the endpoints that speak one protocol
 * ({@code llm.endpoints.<name>.protocol}). The auto-configuration knows {@code openai}; a bean of
 * this type adds a protocol (or replaces a built-in one of the same name). A client that holds
 * resources, such as a connection pool, implements {@link AutoCloseable} and is closed with the
 * application context.
 */
public interface LlmClientFactory {

	/**
	 * The protocol's name, as {@code llm.endpoints.<name>.protocol} spells it.
	 * @return the name
	 */
	String protocol();

	/**
	 * Create the client of one endpoint.
	 * @param settings the endpoint's client settings
	 * @return the client
	 */
	LlmClient create(ClientSettings settings);

}
