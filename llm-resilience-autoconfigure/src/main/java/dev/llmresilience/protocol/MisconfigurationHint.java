package dev.llmresilience.protocol;

import java.util.Set;
import java.util.regex.Pattern;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.failure.LlmUpstreamException.ProviderError;
import org.jspecify.annotations.Nullable;

/**
 * Says what a 401, 403, 404 (or another 4xx the failure rules call a configuration error) most likely
 * means for the endpoint that got it: the URL that was called (never a header) and the usual fix,
 * such as a base URL that lacks its API version ({@code /v1}). Shared by the protocols' clients.
 */
public final class MisconfigurationHint {

	// the paths that sit below a versioned base URL (https://api.openai.com/v1, https://api.anthropic.com/v1)
	private static final Set<String> VERSIONED_PATHS = Set.of("/chat/completions", "/responses", "/messages");

	private static final Pattern ENDS_WITH_VERSION = Pattern.compile(".*/v\\d+[a-z0-9]*$");

	private MisconfigurationHint() {
	}

	/**
	 * Reword a configuration error so that it names the URL called and the likely fix; any other
	 * exception passes through unchanged.
	 * @param classified what the failure rules made of the response
	 * @param settings the endpoint's settings
	 * @param path the path called below the base URL, e.g. {@code /chat/completions}
	 * @param error the error the body carried, or {@code null}
	 * @return the reworded exception, or {@code classified}
	 */
	public static LlmException explain(LlmException classified, ClientSettings settings, String path,
			@Nullable ProviderError error) {
		if (!(classified instanceof LlmUpstreamException upstream) || upstream.outcome() != Outcome.CONFIGURATION_ERROR) {
			return classified;
		}
		int status = upstream.status();
		// without the query (Azure's api-version): the path says where the call went
		String called = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
		String detail = (error != null && error.message() != null) ? " (the provider says: " + error.message() + ")" : "";
		String message = "HTTP " + status + " from POST " + settings.baseUrl() + called + detail + ". "
				+ fix(settings, called, status, error);
		return new LlmUpstreamException(settings.name(), Outcome.CONFIGURATION_ERROR, status, null, message, null);
	}

	private static String fix(ClientSettings settings, String path, int status, @Nullable ProviderError error) {
		String property = property(settings.name());
		String code = (error != null) ? error.code() : null;
		return switch (status) {
			case 401 -> settings.apiKey().isPresent()
					? "The provider refused the key: check that " + property + ".api-key holds a valid key for "
							+ settings.baseUrl().getHost() + "."
					: "No api-key is configured: set " + property + ".api-key (e.g. to ${OPENAI_API_KEY}).";
			case 403 -> "The key is not allowed to use model '" + settings.model()
					+ "' or this API (organization, project or region): check the key's permissions and "
					+ property + ".model.";
			case 404 -> notFound(settings, property, path, code);
			default -> "Check " + property + ".base-url, api-key and model.";
		};
	}

	private static String notFound(ClientSettings settings, String property, String path, @Nullable String code) {
		String baseUrl = settings.baseUrl().toString();
		if (!VERSIONED_PATHS.contains(path)) {
			// a deployment path (Azure): the version is a query parameter, the base URL the resource's
			return "Check " + property + ".base-url (the resource's URL, without a path), its deployment and api-version.";
		}
		if ("model_not_found".equals(code) || ENDS_WITH_VERSION.matcher(baseUrl).matches()) {
			return "Check that model '" + settings.model() + "' exists at this provider (" + property + ".model).";
		}
		return "The base-url usually ends with the API version: try " + property + ".base-url=" + baseUrl + "/v1 (so that "
				+ "the call goes to " + baseUrl + "/v1" + path + ").";
	}

	// Boot binds an endpoint name with a dot only in brackets (llm.endpoints[gpt-4.1]).
	private static String property(String endpoint) {
		return endpoint.contains(".") ? "llm.endpoints[" + endpoint + "]" : "llm.endpoints." + endpoint;
	}

}
