package dev.llmresilience.benchmarks;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * One side's run in {@link LoopbackLoad}, as a JFR event (recorded only while a flight recording
 * runs), so that {@link ProfileFrames} can tell the samples of each side apart when the sides
 * rotate in one JVM.
 */
@Name("dev.llmresilience.benchmarks.Round")
@Label("Benchmark round")
@Category("llm-resilience")
@Description("One side's run of a benchmark: its calls between begin and commit")
final class RoundEvent extends Event {

	@Label("Side")
	String side;

	@Label("Concurrency")
	int concurrency;

	@Label("Calls")
	long calls;

}
