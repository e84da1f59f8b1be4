package dev.llmresilience.openaiapi;

import org.springframework.boot.WebApplicationType;

/** The Responses API's refusals in a Servlet application. */
class ServletResponsesApiStrictTests extends ResponsesApiStrictContract {

	@Override
	WebApplicationType type() {
		return WebApplicationType.SERVLET;
	}

}
