/**
 * The deferred tier: requests that wait in a queue, are retried in the background, and end completed or failed.
 */
@NullMarked
package dev.llmresilience.deferred;

import org.jspecify.annotations.NullMarked;
