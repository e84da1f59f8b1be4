package dev.llmresilience.protocol;

import java.util.ArrayList;
import java.util.List;

import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.ProviderError;
import dev.llmresilience.failure.Redaction;
import org.jspecify.annotations.Nullable;

/**
 * What one endpoint's provider says in words, made safe to show: the message, code and type of its
 * errors, the model it names, and the errors of the transport and decoders, with the endpoint's key and header values
 * (and anything shaped like a key) redacted and each text cut to
 * {@value Redaction#MAX_PROVIDER_TEXT} characters.
 */
final class ProviderText {

	private static final int SHORTEST_SECRET = 8;

	private final String endpoint;

	private final List<String> secrets;

	private final FailureClassifier classifier;

	private volatile @Nullable String[] lastModel = new String[2];

	ProviderText(ClientSettings settings, FailureClassifier classifier) {
		this.endpoint = settings.name();
		this.secrets = secrets(settings);
		this.classifier = classifier;
	}

	/**
	 * What a provider's text must not repeat: the key and the header values (an organization or
	 * project id, an Azure {@code api-key}). Values shorter than {@value #SHORTEST_SECRET} characters
	 * are no secrets, and redacting them would garble the message (a version such as {@code v1}).
	 */
	private static List<String> secrets(ClientSettings settings) {
		List<String> secrets = new ArrayList<>();
		if (settings.apiKey().reveal() != null) {
			secrets.add(settings.apiKey().reveal());
		}
		settings.headers()
			.values()
			.stream()
			.filter((value) -> value.length() >= SHORTEST_SECRET)
			.forEach(secrets::add);
		return List.copyOf(secrets);
	}

	/**
	 * The model the provider says answered, as the caller sees it in {@code ChatResponse.model()}.
	 * @param model the model, or {@code null}
	 * @return the model redacted and cut, or {@code null}
	 */
	@Nullable String model(@Nullable String model) {
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

	ProviderError error(OpenAiChatCompletion.Error error) {
		String code = (error.code() != null) ? String.valueOf(error.code()) : null;
		return new ProviderError(Redaction.redactAndCut(error.type(), this.secrets),
				Redaction.redactAndCut(code, this.secrets), Redaction.redactAndCut(error.message(), this.secrets));
	}

	/**
	 * Classify an error of the transport or of a decoder, whose message may quote the provider.
	 * @param error the error
	 * @return the classified error, with no secret and no raw cause
	 */
	Throwable classify(Throwable error) {
		return this.classifier.classifyError(this.endpoint, error, this.secrets);
	}

}
