package dev.llmresilience.shared.redis;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

/** The Lua scripts, one file each beside this class, so that each multi-key step is atomic. */
final class RedisScripts {

	private RedisScripts() {
	}

	static <T> RedisScript<T> load(String name, Class<T> resultType) {
		return RedisScript.of(new ClassPathResource("dev/llmresilience/shared/redis/" + name + ".lua"), resultType);
	}

}
