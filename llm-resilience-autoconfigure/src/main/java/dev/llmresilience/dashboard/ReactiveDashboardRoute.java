package dev.llmresilience.dashboard;

import java.nio.charset.StandardCharsets;

import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * {@code GET /llm/dashboard} in a WebFlux application.
 */
public final class ReactiveDashboardRoute {

	private ReactiveDashboardRoute() {
	}

	/**
	 * The route that serves the page.
	 * @param page the page
	 * @return the route
	 */
	public static RouterFunction<ServerResponse> of(DashboardPage page) {
		return RouterFunctions.route(RequestPredicates.GET(DashboardPage.PATH), (request) -> ServerResponse.ok()
			.contentType(new MediaType(MediaType.TEXT_HTML, StandardCharsets.UTF_8))
			.cacheControl(CacheControl.noStore())
			.header("Content-Security-Policy", DashboardPage.CONTENT_SECURITY_POLICY)
			.header("X-Content-Type-Options", "nosniff")
			.bodyValue(page.html()));
	}

}
