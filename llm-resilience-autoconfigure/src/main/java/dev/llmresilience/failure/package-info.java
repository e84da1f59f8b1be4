/**
 * What went wrong upstream: the exception hierarchy, the redaction of what a provider said, and the
 * replaceable decisions of docs/failure-rules.md (retry, wait, breaker) in {@code FailureClassifier}.
 * What a status or a transport error stands for is {@code protocol.UpstreamFailures}, one layer up.
 */
@NullMarked
package dev.llmresilience.failure;

import org.jspecify.annotations.NullMarked;
