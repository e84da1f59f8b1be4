/**
 * Shared state on Redis, through the application's reactive Spring Data Redis connection: the
 * fleet's breaker outcomes and states, the call-volume guard's permits, the budget's spending and
 * the deferred queue on a Redis Stream. Nothing here is ever waited on by a call.
 */
@NullMarked
package dev.llmresilience.shared.redis;

import org.jspecify.annotations.NullMarked;
