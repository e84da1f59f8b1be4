package dev.llmresilience.openaiapi;

import org.springframework.boot.WebApplicationType;

/** The Responses API's refusals in a WebFlux application. */
class WebFluxResponsesApiStrictTests extends ResponsesApiStrictContract {

	@Override
	WebApplicationType type() {
		return WebApplicationType.REACTIVE;
	}

}
