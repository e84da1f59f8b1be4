/**
 * Guards over all endpoints: the call-volume guard against runaway loops and the daily budget.
 */
@NullMarked
package dev.llmresilience.guard;

import org.jspecify.annotations.NullMarked;
