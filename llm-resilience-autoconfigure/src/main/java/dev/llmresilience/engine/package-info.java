/**
 * Everything a call goes through and everything that watches it, with the wiring that builds it:
 * the gateway's walk of a route (chat and stream), hedging and the degrader; each endpoint's
 * attempt (breaker, retry, bulkhead, deadlines, probes); balancing; the guards (concurrency, call
 * volume, budget); the deferral queue; the fallback caches; degradation watch and meters;
 * {@code /actuator/llmbreakers} and the {@code llm} health contributor; the auto-configurations
 * and the resolution of {@code llm.*} properties into settings. For the starter itself: all is
 * package-private except the auto-configurations, the actuator endpoint, and the read surface
 * ({@code EndpointRegistry}, {@code LlmEndpoint}, {@code RouteBalancer}) that tests, benchmarks
 * and the adapters use.
 */
@NullMarked
package dev.llmresilience.engine;

import org.jspecify.annotations.NullMarked;
