/**
 * The live dashboard and its auto-configuration: one self-contained page that draws
 * {@code /actuator/llmbreakers}, served at {@code /llm/dashboard} in Servlet and WebFlux
 * applications alike. For browsers; only the auto-configuration is public.
 */
@NullMarked
package dev.llmresilience.dashboard;

import org.jspecify.annotations.NullMarked;
