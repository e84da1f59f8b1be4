package dev.llmresilience.engine;

import java.util.Locale;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/** How configuration names the constants of this package's enums: relaxed, as Boot binds an enum. */
final class ConfigValues {

	private ConfigValues() {
	}

	static <E extends Enum<E>> @Nullable E named(E[] constants, Function<E, String> value, String name) {
		String wanted = name.trim().toLowerCase(Locale.ROOT).replace('_', '-');
		for (E constant : constants) {
			if (value.apply(constant).equals(wanted)) {
				return constant;
			}
		}
		return null;
	}

}
