package dev.llmresilience.protocol;

import java.util.List;

import dev.llmresilience.failure.LlmUpstreamException.ProviderError;
import org.jspecify.annotations.Nullable;

/**
 * What one endpoint's provider says in words, made safe to show: the message, code and type of its
 * errors, the model it names, and the errors of the transport and decoders, with the configured keys
 * and header values ({@link UpstreamFailures#secretsOf}, and anything shaped like a key) redacted and
 * each text cut to {@value Redaction#MAX_PROVIDER_TEXT} characters. Every protocol's client uses one.
 */
public final class ProviderText {

	private final String endpoint;

	private final List<String> secrets;

	private final UpstreamFailures failures;

	private volatile @Nullable String[] lastModel = new String[2];

	/**
	 * Create one for an endpoint.
	 * @param settings the endpoint's settings
	 * @param failures what the provider's failures stand for
	 */
	public ProviderText(ClientSettings settings, UpstreamFailures failures) {
		this.endpoint = settings.name();
		this.secrets = failures.secretsOf(settings);
		this.failures = failures;
	}

	/**
	 * The model the provider says answered, as the caller sees it in {@code ChatResponse.model()}.
	 * @param model the model, or {@code null}
	 * @return the model redacted and cut, or {@code null}
	 */
	public @Nullable String model(@Nullable String model) {
		if (model == null) {
			return null;
		}
		// Every event of a stream names the model, nearly always the same one.
		String[] last = this.lastModel;
		if (model.equals(last[0])) {
			return last[1];
		}
		String redacted = Redaction.redactAndCut(model, this.secrets);
		this.lastModel = new String[] { model, redacted };
		return redacted;
	}

	/**
	 * An error object of the provider's.
	 * @param type its type, or {@code null}
	 * @param code its code (a string, a number, or anything a provider put there), or {@code null}
	 * @param message its message, or {@code null}
	 * @return the error, each field redacted and cut
	 */
	public ProviderError error(@Nullable String type, @Nullable Object code, @Nullable String message) {
		return new ProviderError(Redaction.redactAndCut(type, this.secrets),
				Redaction.redactAndCut((code != null) ? String.valueOf(code) : null, this.secrets),
				Redaction.redactAndCut(message, this.secrets));
	}

	/**
	 * Classify an error of the transport or of a decoder, whose message may quote the provider.
	 * @param error the error
	 * @return the classified error, with no secret and no raw cause
	 */
	public Throwable classify(Throwable error) {
		return this.failures.classifyError(this.endpoint, error, this.secrets);
	}

}
