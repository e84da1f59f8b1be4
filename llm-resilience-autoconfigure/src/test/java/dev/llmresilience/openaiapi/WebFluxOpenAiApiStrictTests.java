package dev.llmresilience.openaiapi;

import org.springframework.boot.WebApplicationType;

/** The OpenAI-compatible API's refusals in a WebFlux application (Reactor Netty). */
class WebFluxOpenAiApiStrictTests extends OpenAiApiStrictContract {

	@Override
	WebApplicationType type() {
		return WebApplicationType.REACTIVE;
	}

}
