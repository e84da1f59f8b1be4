package dev.llmresilience.dashboard;

import java.nio.charset.StandardCharsets;

import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * {@code GET /llm/dashboard} in a Servlet (Spring MVC) application.
 */
public final class ServletDashboardRoute {

	private ServletDashboardRoute() {
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
			.body(page.html()));
	}

}
