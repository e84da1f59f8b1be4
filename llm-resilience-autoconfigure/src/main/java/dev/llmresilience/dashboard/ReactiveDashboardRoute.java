package dev.llmresilience.dashboard;

import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * {@code GET /llm/dashboard} in a WebFlux application.
 */
final class ReactiveDashboardRoute {

	private ReactiveDashboardRoute() {
	}

	/**
	 * The route that serves the page.
	 * @param page the page
	 * @return the route
	 */
	public static RouterFunction<ServerResponse> of(DashboardPage page) {
		return RouterFunctions.route(RequestPredicates.GET(DashboardPage.PATH),
				(request) -> ServerResponse.ok().headers(page::addHeaders).bodyValue(page.html()));
	}

}
