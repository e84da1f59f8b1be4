/**
 * Watches what the gateway answers, through its listener SPI: which routes have been answering
 * degraded, how much and since when.
 */
@NullMarked
package dev.llmresilience.watch;

import org.jspecify.annotations.NullMarked;
