package dev.llmresilience.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an {@link LlmConfigurationException} as Boot's "APPLICATION FAILED TO START" block,
 * naming the property and the fix.
 */
class LlmConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<LlmConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, LlmConfigurationException cause) {
		return new FailureAnalysis("Invalid llm-resilience configuration: property '" + cause.getProperty() + "' "
				+ cause.getProblem() + ".", cause.getAction(), cause);
	}

}
