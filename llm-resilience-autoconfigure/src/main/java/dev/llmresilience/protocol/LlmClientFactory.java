package dev.llmresilience.protocol;

import java.net.URI;

import dev.llmresilience.protocol.ClientSettings.InvalidOptionException;
import dev.llmresilience.protocol.ClientSettings.ProtocolOptions;

/**
 * Creates the {@link LlmClient}s of the endpoints that speak one protocol
 * ({@code llm.endpoints.<name>.protocol}), and owns the protocol's options. The auto-configuration
 * has {@code openai}, {@code openai-responses}, {@code anthropic} and {@code azure-openai} built in;
 * a bean of this type adds a protocol (or replaces a built-in one of the same name, its option
 * checks included). A client that holds resources, such as a connection pool, implements
 * {@link AutoCloseable} and is closed with the application context.
 */
public interface LlmClientFactory {

	/**
	 * The protocol's name, as {@code llm.endpoints.<name>.protocol} spells it.
	 * @return the name
	 */
	String protocol();

	/**
	 * Check the protocol-specific options an endpoint of this protocol set, and keep those its
	 * clients read: called once per endpoint at start-up, before {@link #create}; a value refused
	 * here fails start-up, reported as the property it was set at. The default keeps every option as
	 * it was set, for a protocol that reads them itself.
	 * @param options what the endpoint set (trimmed; a key set blank is left out)
	 * @param prefix the endpoint's property prefix, with its trailing dot (e.g.
	 * {@code llm.endpoints.azure.}), to name a property in a message
	 * @param baseUrl the endpoint's base URL, already checked to be an http(s) URL
	 * @return the options the endpoint's {@link ClientSettings} carry
	 * @throws InvalidOptionException when a value cannot work with this protocol
	 */
	default ProtocolOptions options(ProtocolOptions options, String prefix, URI baseUrl) {
		return options;
	}

	/**
	 * Create the client of one endpoint.
	 * @param settings the endpoint's client settings
	 * @return the client
	 */
	LlmClient create(ClientSettings settings);

}
