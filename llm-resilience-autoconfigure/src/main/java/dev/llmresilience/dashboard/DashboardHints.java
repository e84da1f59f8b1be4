package dev.llmresilience.dashboard;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.core.io.ClassPathResource;

/**
 * The dashboard's page as a resource of a native image, where {@link DashboardPage} reads it.
 * Listed in {@code META-INF/spring/aot.factories}.
 */
final class DashboardHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources().registerResource(new ClassPathResource("dashboard.html", DashboardPage.class));
	}

}
