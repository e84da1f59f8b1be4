/**
 * State the replicas of an application share: what the health contributor and the actuator are
 * told of it, and the fleet-wide breaker transitions made by hand. The Redis implementation is in
 * {@code shared.redis}; without it every instance keeps its state to itself.
 */
@NullMarked
package dev.llmresilience.shared;

import org.jspecify.annotations.NullMarked;
