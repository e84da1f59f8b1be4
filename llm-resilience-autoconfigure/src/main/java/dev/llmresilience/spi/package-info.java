/**
 * What extenders implement or replace, each as a bean: the route selector, the balance source, the
 * fallback cache, the deferred store, the shared state (and its breaker control), and the
 * observation conventions of a call and of an attempt. For extenders; the starter's own
 * implementations live in the engine.
 */
@NullMarked
package dev.llmresilience.spi;

import org.jspecify.annotations.NullMarked;
