/**
 * Spring AI models as endpoints ({@code protocol: spring-ai}), and the translation between Spring
 * AI's messages, options and answers and the project's own. Loaded only when Spring AI is present.
 */
@NullMarked
package dev.llmresilience.protocol.springai;

import org.jspecify.annotations.NullMarked;
