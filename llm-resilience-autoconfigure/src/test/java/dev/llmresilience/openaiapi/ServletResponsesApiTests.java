package dev.llmresilience.openaiapi;

import org.springframework.boot.WebApplicationType;

/** OpenAI's Responses API in a Servlet application (Spring MVC on Tomcat). */
class ServletResponsesApiTests extends ResponsesApiContract {

	@Override
	WebApplicationType type() {
		return WebApplicationType.SERVLET;
	}

}
