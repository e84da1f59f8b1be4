package dev.llmresilience.openaiapi;

import org.springframework.boot.WebApplicationType;

/** The OpenAI-compatible API in a WebFlux application (Reactor Netty). */
class WebFluxOpenAiApiTests extends OpenAiApiContract {

	@Override
	WebApplicationType type() {
		return WebApplicationType.REACTIVE;
	}

}
