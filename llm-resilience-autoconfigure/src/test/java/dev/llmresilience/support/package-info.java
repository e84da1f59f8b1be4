/**
 * What the tests share, and only the tests: the fake upstream ({@link dev.llmresilience.support.FakeUpstream}
 * and its {@link dev.llmresilience.support.Answers}, {@link dev.llmresilience.support.Wire}), endpoints built by
 * hand, clocks and listeners. No main package has this name; {@code LayeringTests} imports main classes only.
 */
@NullMarked
package dev.llmresilience.support;

import org.jspecify.annotations.NullMarked;
