/**
 * Spring Boot auto-configuration, configuration properties and start-up validation.
 */
@NullMarked
package dev.llmresilience.autoconfigure;

import org.jspecify.annotations.NullMarked;
