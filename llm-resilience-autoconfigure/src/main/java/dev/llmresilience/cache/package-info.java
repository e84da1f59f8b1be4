/**
 * The last-good-answer cache: an earlier answer to the same request, used when nothing live can answer.
 */
@NullMarked
package dev.llmresilience.cache;

import org.jspecify.annotations.NullMarked;
