/**
 * Configuration: the {@code llm.*} properties (the IDE metadata is written from them), the
 * start-up checks of their values in {@code LlmConfigurationException}, and its failure analyzer.
 * For users who configure or inject the properties; the auto-configurations live with what they
 * build (engine, openaiapi, springai, dashboard).
 */
@NullMarked
package dev.llmresilience.autoconfigure;

import org.jspecify.annotations.NullMarked;
