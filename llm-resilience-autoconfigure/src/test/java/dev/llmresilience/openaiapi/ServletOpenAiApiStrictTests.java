package dev.llmresilience.openaiapi;

import org.springframework.boot.WebApplicationType;

/** The OpenAI-compatible API's refusals in a Servlet application (Spring MVC on Tomcat). */
class ServletOpenAiApiStrictTests extends OpenAiApiStrictContract {

	@Override
	WebApplicationType type() {
		return WebApplicationType.SERVLET;
	}

}
