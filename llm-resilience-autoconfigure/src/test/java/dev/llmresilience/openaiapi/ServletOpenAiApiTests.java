package dev.llmresilience.openaiapi;

import org.springframework.boot.WebApplicationType;

/** The OpenAI-compatible API in a Servlet application (Spring MVC on Tomcat). */
class ServletOpenAiApiTests extends OpenAiApiContract {

	@Override
	WebApplicationType type() {
		return WebApplicationType.SERVLET;
	}

}
