/**
 * The /actuator/llmbreakers endpoint and its descriptors.
 */
@NullMarked
package dev.llmresilience.actuate;

import org.jspecify.annotations.NullMarked;
