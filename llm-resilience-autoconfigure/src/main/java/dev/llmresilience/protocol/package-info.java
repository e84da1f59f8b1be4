/**
 * Wire formats and HTTP clients of the providers (OpenAI-compatible chat completions).
 */
@NullMarked
package dev.llmresilience.protocol;

import org.jspecify.annotations.NullMarked;
