/**
 * Benchmarks of the gateway: JMH for the decorator chain, loopback load against raw WebClient, the
 * time-scaled outage replay, and memory. Run by hand with the commands in BENCHMARKS.md.
 */
@NullMarked
package dev.llmresilience.benchmarks;

import org.jspecify.annotations.NullMarked;
