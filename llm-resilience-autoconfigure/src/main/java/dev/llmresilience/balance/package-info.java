/**
 * Which endpoint of a route a call tries first: weighted or least-latency choice among endpoints of
 * equal priority, cheapest-first routes, and the share each endpoint received.
 */
@NullMarked
package dev.llmresilience.balance;

import org.jspecify.annotations.NullMarked;
