package dev.llmresilience.dashboard;

import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * {@code GET /llm/dashboard} in a Servlet (Spring MVC) application.
 */
final class ServletDashboardRoute {

	private ServletDashboardRoute() {
	}

	/**
	 * The route that serves the page.
	 * @param page the page
	 * @return the route
	 */
	public static RouterFunction<ServerResponse> of(DashboardPage page) {
		return RouterFunctions.route(RequestPredicates.GET(DashboardPage.PATH),
				(request) -> ServerResponse.ok().headers(page::addHeaders).body(page.html()));
	}

}
