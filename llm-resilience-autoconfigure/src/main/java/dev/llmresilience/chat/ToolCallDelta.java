package dev.llmresilience.chat;

import org.jspecify.annotations.Nullable;

/**
 * A piece of a function call the model is streaming. The first piece of a call carries its
 * {@code id} and {@code name}; the pieces after it carry only further {@code arguments} text, to be
 * appended to the earlier pieces of the same {@code index}.
 *
 * @param index which call of the answer this piece belongs to (from 0)
 * @param id the call's id, on its first piece; else {@code null}
 * @param name the function's name, on its first piece; else {@code null}
 * @param arguments a fragment of the arguments' JSON text (may be empty)
 */
public record ToolCallDelta(int index, @Nullable String id, @Nullable String name, String arguments) {
}
