/**
 * The live dashboard: one self-contained page that draws {@code /actuator/llmbreakers}, served at
 * {@code /llm/dashboard} in Servlet and WebFlux applications alike.
 */
@NullMarked
package dev.llmresilience.dashboard;

import org.jspecify.annotations.NullMarked;
