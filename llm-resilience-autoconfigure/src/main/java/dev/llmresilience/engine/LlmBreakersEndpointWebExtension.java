package dev.llmresilience.engine;

import dev.llmresilience.engine.LlmBreakersEndpoint.EndpointDescriptor;

import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * Over HTTP, a write to an unknown endpoint name is a 404 (a write operation that returns nothing
 * would otherwise answer 204).
 */
@EndpointWebExtension(endpoint = LlmBreakersEndpoint.class)
class LlmBreakersEndpointWebExtension {

	private final LlmBreakersEndpoint delegate;

	/**
	 * Create the extension.
	 * @param delegate the endpoint
	 */
	public LlmBreakersEndpointWebExtension(LlmBreakersEndpoint delegate) {
		this.delegate = delegate;
	}

	/**
	 * Move a breaker; see {@link LlmBreakersEndpoint#transition(String, String)}.
	 * @param name the endpoint's name
	 * @param state the target state
	 * @return the new descriptor, or a 404 for an unknown name
	 */
	@WriteOperation
	public WebEndpointResponse<EndpointDescriptor> transition(@Selector String name, String state) {
		EndpointDescriptor descriptor = this.delegate.transition(name, state);
		return (descriptor != null) ? new WebEndpointResponse<>(descriptor)
				: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
	}

}
