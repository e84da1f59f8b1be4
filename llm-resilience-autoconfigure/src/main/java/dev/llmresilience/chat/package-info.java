/**
 * The value types every layer speaks: requests, answers, chunks, attempts and their outcomes. For
 * everyone; depends on nothing else of this project.
 */
@NullMarked
package dev.llmresilience.chat;

import org.jspecify.annotations.NullMarked;
