package dev.llmresilience;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures;
import org.jspecify.annotations.NullMarked;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The package layering, written down once: each layer may use the layers below it and its own,
 * never one above; no two packages depend on each other; every package has its place, so a new one
 * must be slotted in here before it can be built; and each package shows only what its audience
 * uses, so that the public surface stays small enough to read in one sitting.
 */
class LayeringTests {

	/**
	 * Top to bottom; packages in one row are siblings. A package with sub-packages in a row of their
	 * own ({@code protocol}, below the protocols it serves) is its own classes only.
	 */
	static final List<List<String>> LAYERS = List.of(List.of("openaiapi", "springai", "dashboard"), List.of("engine"),
			List.of("redis"), List.of("autoconfigure"), List.of("spi"), List.of("gateway"),
			List.of("protocol.anthropic", "protocol.openai"), List.of("protocol"), List.of("failure"), List.of("chat"));

	/** The most public top-level types the main sources may have. */
	static final int MOST_PUBLIC_TYPES = 82;

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

	@Test
	void atMostEightyPublicTopLevelTypes() {
		Map<String, Set<String>> byPackage = new TreeMap<>();
		MAIN.stream()
			.filter(LayeringTests::isPublicTopLevel)
			.forEach((type) -> byPackage.computeIfAbsent(type.getPackageName(), (name) -> new TreeSet<>())
				.add(type.getSimpleName()));
		int count = byPackage.values().stream().mapToInt(Set::size).sum();
		assertThat(count).as("public top-level types, by package: %s", byPackage).isLessThanOrEqualTo(MOST_PUBLIC_TYPES);
	}

	@Test
	void engineShowsOnlyItsAutoConfigurationsAndItsReadSurface() {
		Set<String> surface = Set.of("LlmBreakersEndpoint", "EndpointRegistry", "LlmEndpoint", "RouteBalancer");
		classes().that(publicTopLevel())
			.and()
			.resideInAPackage("dev.llmresilience.engine")
			.should()
			.beAnnotatedWith(AutoConfiguration.class)
			.orShould()
			.haveNameMatching(".*\\.(" + String.join("|", surface) + ")")
			.check(MAIN);
	}

	@Test
	void adaptersShowOnlyTheirAutoConfiguration() {
		classes().that(publicTopLevel())
			.and()
			.resideInAnyPackage("dev.llmresilience.openaiapi", "dev.llmresilience.springai", "dev.llmresilience.dashboard")
			.should()
			.beAnnotatedWith(AutoConfiguration.class)
			// the options a Spring AI user passes to say a call's priority
			.orShould()
			.haveSimpleName("LlmGatewayChatOptions")
			.check(MAIN);
	}

	@Test
	void protocolsShowOnlyTheirFactories() {
		classes().that(publicTopLevel())
			.and()
			.resideInAnyPackage("dev.llmresilience.protocol.openai", "dev.llmresilience.protocol.anthropic")
			.should()
			.haveSimpleNameEndingWith("ClientFactory")
			.orShould()
			.haveSimpleName("ReservedFields")
			.check(MAIN);
	}

	@Test
	void redisShowsOnlyRedisSharedState() {
		classes().that(publicTopLevel())
			.and()
			.resideInAPackage("dev.llmresilience.redis")
			.should()
			.haveSimpleName("RedisSharedState")
			.check(MAIN);
	}

	@Test
	void everyPackageHasAPackageInfoMarkedNullMarked() throws Exception {
		Set<String> packages = MAIN.stream().map(JavaClass::getPackageName).collect(Collectors.toCollection(TreeSet::new));
		for (String name : packages) {
			Class<?> info = Class.forName(name + ".package-info");
			assertThat(info.isAnnotationPresent(NullMarked.class)).as(name).isTrue();
		}
	}

	private static DescribedPredicate<JavaClass> publicTopLevel() {
		return DescribedPredicate.describe("are public top-level types", LayeringTests::isPublicTopLevel);
	}

	private static boolean isPublicTopLevel(JavaClass type) {
		return type.isTopLevelClass() && type.getModifiers().contains(JavaModifier.PUBLIC)
				&& !type.getSimpleName().equals("package-info");
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
