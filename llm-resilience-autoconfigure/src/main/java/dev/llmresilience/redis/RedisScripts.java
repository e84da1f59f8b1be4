package dev.llmresilience.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/** The Lua scripts, one file each beside this class, so that each multi-key step is atomic. */
final class RedisScripts {

	private static final String DIRECTORY = "dev/llmresilience/redis/";

	private RedisScripts() {
	}

	/**
	 * A script, read once here: a script made from the resource would read the file again each time
	 * Redis has not cached it ({@code NOSCRIPT}, as after a restart), on the connection's event loop.
	 * @param <T> the result's type
	 * @param name the file's name without {@code .lua}
	 * @param resultType the result's type
	 * @return the script
	 */
	static <T> RedisScript<T> load(String name, Class<T> resultType) {
		ClassPathResource file = new ClassPathResource(DIRECTORY + name + ".lua");
		try {
			return RedisScript.of(file.getContentAsString(StandardCharsets.UTF_8), resultType);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not read the Redis script " + file.getPath()
					+ " from the starter's jar; is the jar complete?", ex);
		}
	}

	/** The scripts as resources of a native image. Listed in {@code META-INF/spring/aot.factories}. */
	static final class Hints implements RuntimeHintsRegistrar {

		@Override
		public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
			hints.resources().registerPattern(DIRECTORY + "*.lua");
		}

	}

}
