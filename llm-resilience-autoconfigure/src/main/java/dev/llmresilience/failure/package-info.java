/**
 * What went wrong upstream: the sealed exception hierarchy users catch, and the replaceable
 * decisions of docs/failure-rules.md (retry, wait, breaker) in {@code FailureClassifier}. What a
 * status or a transport error stands for is {@code protocol.UpstreamFailures}, one layer up. For
 * users and extenders.
 */
@NullMarked
package dev.llmresilience.failure;

import org.jspecify.annotations.NullMarked;
