package dev.llmresilience.protocol.openai;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmUpstreamException.ProviderError;
import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.MisconfigurationHint;
import dev.llmresilience.protocol.ProviderText;
import dev.llmresilience.protocol.UpstreamFailures;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * What an error the Responses API reports inside a 200 stands for: the {@code error} of a
 * {@code failed} response (in a body, or in a stream's {@code response.failed}) and an {@code error}
 * event carry a code but no HTTP status, so the code names the status it is classified as, and the
 * failure rules do the rest ({@link UpstreamFailures#classifyStatus}): {@code rate_limit_exceeded}
 * and {@code insufficient_quota} a 429, {@code context_length_exceeded} and the codes of a request the
 * model cannot take ({@code invalid_prompt}, the image codes) a 400, {@code data_residency_mismatch}
 * a 403 (the endpoint's project), {@code content_filter} and {@code bio_policy} the content filter, a
 * number its status, anything else ({@code server_error},
 * {@code vector_store_timeout}, no code) a 500.
 */
final class OpenAiResponsesErrors {

	private final ClientSettings settings;

	private final UpstreamFailures failures;

	private final ProviderText providerText;

	private final String path;

	OpenAiResponsesErrors(ClientSettings settings, UpstreamFailures failures, ProviderText providerText, String path) {
		this.settings = settings;
		this.failures = failures;
		this.providerText = providerText;
		this.path = path;
	}

	/**
	 * The provider's error, redacted and cut.
	 * @param error the error
	 * @return the error as failures carry it
	 */
	ProviderError provider(OpenAiChatCompletion.Error error) {
		return this.providerText.error(error.type(), error.code(), error.message());
	}

	/**
	 * Classify an error reported without a status.
	 * @param error the error, or {@code null} when the provider gave none
	 * @param headers the response's headers
	 * @return the failure it stands for
	 */
	LlmException classify(OpenAiChatCompletion.@Nullable Error error, HttpHeaders headers) {
		OpenAiChatCompletion.Error known = (error != null) ? error : new OpenAiChatCompletion.Error(null, null, null);
		ProviderError provider = provider(known);
		// a safety refusal is the content filter's row, whose code the failure rules know
		if ("bio_policy".equals(provider.code())) {
			provider = new ProviderError(provider.type(), ChatResponse.CONTENT_FILTER, provider.message());
		}
		return MisconfigurationHint.explain(
				this.failures.classifyStatus(this.settings.name(), statusOf(known.code()), headers, provider),
				this.settings, this.path, provider);
	}

	static int statusOf(@Nullable Object code) {
		if (code instanceof Number number && number.intValue() >= 400 && number.intValue() < 600) {
			return number.intValue();
		}
		String text = (code != null) ? String.valueOf(code) : "";
		return switch (text) {
			case "rate_limit_exceeded", "insufficient_quota" -> 429;
			case "context_length_exceeded", "invalid_prompt", "content_filter", "bio_policy" -> 400;
			case "data_residency_mismatch" -> 403;
			// invalid_image, image_too_large, failed_to_download_image, ...: the request's image
			default -> text.contains("image") ? 400 : 500;
		};
	}

}
