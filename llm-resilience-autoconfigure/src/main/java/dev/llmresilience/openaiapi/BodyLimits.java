package dev.llmresilience.openaiapi;

/**
 * How much of its clients' request bodies the OpenAI-compatible API holds: each body at most
 * {@code maxRequestSize} bytes, and at most {@code maxConcurrentReads} bodies being read at once, so
 * that what slow or hostile clients can make it buffer is bounded by their product.
 *
 * @param maxRequestSize the largest request body, in bytes
 * @param maxConcurrentReads how many bodies may be read at once
 */
record BodyLimits(long maxRequestSize, int maxConcurrentReads) {

	public BodyLimits {
		if (maxRequestSize < 1 || maxConcurrentReads < 1) {
			throw new IllegalArgumentException("Both limits must be positive, not " + maxRequestSize + " bytes and "
					+ maxConcurrentReads + " reads");
		}
	}

}
