package dev.llmresilience.openaiapi;

import org.springframework.boot.WebApplicationType;

/** OpenAI's Responses API in a WebFlux application (Reactor Netty). */
class WebFluxResponsesApiTests extends ResponsesApiContract {

	@Override
	WebApplicationType type() {
		return WebApplicationType.REACTIVE;
	}

}
