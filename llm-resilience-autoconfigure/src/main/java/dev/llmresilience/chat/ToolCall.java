package dev.llmresilience.chat;

import java.io.Serializable;

/**
 * A function call the model asked for.
 *
 * @param id the call's id, to answer it with a {@code tool} message
 * @param name the function's name
 * @param arguments the arguments, as the JSON text the model produced
 */
public record ToolCall(String id, String name, String arguments) implements Serializable {
}
