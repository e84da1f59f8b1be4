/**
 * Anthropic's Messages API ({@code protocol: anthropic}): its wire format, its server-sent events
 * and its errors, mapped to the project's own requests, answers and failure rules.
 */
@NullMarked
package dev.llmresilience.protocol.anthropic;

import org.jspecify.annotations.NullMarked;
