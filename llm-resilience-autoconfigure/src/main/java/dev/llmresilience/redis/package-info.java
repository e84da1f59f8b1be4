/**
 * Shared state on Redis, through the application's reactive Spring Data Redis connection: the
 * fleet's breaker outcomes and states, the call-volume guard's permits, the budget's spending and
 * the deferred queue on a Redis Stream. No call waits on anything here but a deferred one, whose
 * ticket waits (without blocking a thread, at most the command timeout) for Redis to keep its
 * request. For the engine's wiring, which builds {@code RedisSharedState}; all else is
 * package-private.
 */
@NullMarked
package dev.llmresilience.redis;

import org.jspecify.annotations.NullMarked;
