/**
 * What went wrong upstream: the outcome of each attempt, the one classifier of docs/failure-rules.md, and the exception hierarchy.
 */
@NullMarked
package dev.llmresilience.failure;

import org.jspecify.annotations.NullMarked;
