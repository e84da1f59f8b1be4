package dev.llmresilience;

import java.util.Arrays;
import java.util.List;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The package layering, written down once: each layer may use the layers below it and its own,
 * never one above; no two packages depend on each other; and every package has its place, so a new
 * one must be slotted in here before it can be built.
 */
class LayeringTests {

	/**
	 * Top to bottom; packages in one row are siblings. A package with sub-packages in a row of their
	 * own ({@code protocol}, below the protocols it serves) is its own classes only.
	 */
	static final List<List<String>> LAYERS = List.of(List.of("autoconfigure"), List.of("dashboard"),
			List.of("actuate", "metrics", "openaiapi", "springai"), List.of("watch"), List.of("gateway"), List.of("balance"),
			List.of("shared"),
			List.of("endpoint", "cache", "deferred", "guard"),
			List.of("protocol.anthropic", "protocol.openai"), List.of("protocol"), List.of("failure"),
			List.of("chat"));

	private static final JavaClasses MAIN = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.llmresilience");

	@Test
	void everyPackageUsesOnlyItsOwnLayerAndTheLayersBelow() {
		Architectures.LayeredArchitecture layered = Architectures.layeredArchitecture()
			.consideringOnlyDependenciesInLayers();
		for (List<String> layer : LAYERS) {
			layered = layered.layer(name(layer)).definedBy(packages(layer));
		}
		for (int i = 1; i < LAYERS.size(); i++) {
			String[] above = LAYERS.subList(0, i).stream().map(LayeringTests::name).toArray(String[]::new);
			layered = layered.whereLayer(name(LAYERS.get(i))).mayOnlyBeAccessedByLayers(above);
		}
		layered.whereLayer(name(LAYERS.get(0))).mayNotBeAccessedByAnyLayer().check(MAIN);
	}

	@Test
	void noTwoPackagesDependOnEachOther() {
		slices().matching("dev.llmresilience.(*)..").should().beFreeOfCycles().check(MAIN);
	}

	@Test
	void noTwoProtocolsDependOnEachOther() {
		slices().matching("dev.llmresilience.protocol.(*)..").should().beFreeOfCycles().check(MAIN);
	}

	@Test
	void everyClassLivesInAPackageOfTheLayering() {
		String[] all = LAYERS.stream().map(LayeringTests::packages).flatMap(Arrays::stream).toArray(String[]::new);
		classes().should().resideInAnyPackage(all).check(MAIN);
	}

	private static String name(List<String> layer) {
		return String.join("+", layer);
	}

	private static String[] packages(List<String> layer) {
		return layer.stream().map(LayeringTests::pattern).toArray(String[]::new);
	}

	private static String pattern(String name) {
		boolean split = LAYERS.stream().flatMap(List::stream).anyMatch((other) -> other.startsWith(name + "."));
		return "dev.llmresilience." + name + (split ? "" : "..");
	}

}
