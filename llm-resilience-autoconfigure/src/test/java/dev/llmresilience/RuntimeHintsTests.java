package dev.llmresilience;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.llmresilience.protocol.LlmClient;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.annotation.ReflectiveRuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a native image must be told about: every type Jackson reads or writes, found in the
 * bytecode (so a new wire record without a hint fails here), and every resource of the jar, each
 * checked against the hints that Spring's AOT collects from {@code META-INF/spring/aot.factories}
 * and from the actuator endpoints' {@code @ReadOperation}s. The configuration properties are Boot's
 * own business (its AOT binds every {@code @ConfigurationProperties} bean); the sample's AOT test
 * (sample-app's {@code AotProcessedSampleIT}) starts the processed application.
 */
class RuntimeHintsTests {

	private static final JavaClasses MAIN = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.llmresilience");

	/** What reads JSON into a type given by its class. */
	private static final Set<String> READS = Set.of("readValue", "treeToValue", "convertValue", "readerFor",
			"answer", "readOrNull");

	/** What writes a value as JSON. */
	private static final Set<String> WRITES = Set.of("writeValueAsString", "writeValueAsBytes", "writeValue",
			"valueToTree");

	private static final ClassLoader CLASS_LOADER = RuntimeHintsTests.class.getClassLoader();

	private final RuntimeHints hints = collected();

	@Test
	void everyTypeJacksonReadsOrWritesIsRegisteredForBinding() {
		Set<JavaClass> bound = jacksonTypes();
		assertThat(bound.stream().map(JavaClass::getSimpleName)).as("the bytecode scan finds the wire types")
			.contains("OpenAiChatRequest", "OpenAiChatCompletion", "OpenAiChatChunk", "AnthropicRequest",
					"AnthropicMessage", "AnthropicEvent", "Completion", "Chunk", "ModelList", "BreakersDescriptor",
					"ChatMessage", "Text", "ImageUrl");
		Set<String> missing = new TreeSet<>();
		for (JavaClass type : bound) {
			Class<?> reflected = type.reflect();
			if (!isBound(reflected)) {
				missing.add(reflected.getName());
			}
		}
		assertThat(missing).as("types Jackson binds with no reflection hint (add them to a RuntimeHintsRegistrar "
				+ "listed in META-INF/spring/aot.factories)").isEmpty();
	}

	@Test
	void everyResourceOfTheJarIsInTheImage() throws IOException {
		Path root = Path.of("src/main/resources");
		List<String> resources;
		try (Stream<Path> files = Files.walk(root.resolve("dev"))) {
			resources = files.filter(Files::isRegularFile).map((file) -> root.relativize(file).toString().replace('\\', '/'))
				.toList();
		}
		assertThat(resources).as("the Lua scripts and the dashboard's page").contains(
				"dev/llmresilience/redis/breaker-record.lua", "dev/llmresilience/dashboard/dashboard.html");
		assertThat(resources.stream().filter((name) -> !RuntimeHintsPredicates.resource().forResource(name).test(this.hints)))
			.as("resources with no resource hint").isEmpty();
	}

	@Test
	void everyClientOfTheLibrarySaysItselfWhetherItStreams() {
		// LlmClient's default answers by reflection, which a native image answers only for registered methods
		List<String> relying = MAIN.stream()
			.filter((type) -> type.isAssignableTo(LlmClient.class) && !type.isInterface())
			.filter((type) -> type.getMethods().stream().noneMatch((method) -> method.getName().equals("supportsStreaming")))
			.map(JavaClass::getName)
			.toList();
		assertThat(relying).isEmpty();
	}

	private boolean isBound(Class<?> type) {
		if (!RuntimeHintsPredicates.reflection().onType(type).test(this.hints)) {
			return false;
		}
		if (!type.isRecord()) {
			return true;
		}
		Class<?>[] parameters = Arrays.stream(type.getRecordComponents()).map(RecordComponent::getType)
			.toArray(Class<?>[]::new);
		try {
			Constructor<?> canonical = type.getDeclaredConstructor(parameters);
			if (!RuntimeHintsPredicates.reflection().onConstructorInvocation(canonical).test(this.hints)) {
				return false;
			}
		}
		catch (NoSuchMethodException ex) {
			throw new IllegalStateException("A record always has its canonical constructor", ex);
		}
		return Arrays.stream(type.getRecordComponents())
			.allMatch((component) -> RuntimeHintsPredicates.reflection()
				.onMethodInvocation(component.getAccessor())
				.test(this.hints));
	}

	/**
	 * Every type of the library that Jackson binds: annotated for Jackson; given by its class to a
	 * read; built, or returned by a call, in a method that writes JSON; returned by an actuator
	 * operation; and the types of their components and the implementations of their interfaces.
	 */
	private static Set<JavaClass> jacksonTypes() {
		Set<JavaClass> roots = new HashSet<>();
		for (JavaClass type : MAIN) {
			if (hasJacksonAnnotation(type)) {
				roots.add(type);
			}
			if (type.isAnnotatedWith(Endpoint.class)) {
				type.getMethods().stream()
					.filter((method) -> method.getAnnotations().stream()
						.anyMatch((annotation) -> annotation.getRawType().getName().endsWith("Operation")))
					.forEach((method) -> roots.addAll(method.getReturnType().getAllInvolvedRawTypes()));
			}
			for (JavaCodeUnit code : type.getCodeUnits()) {
				Set<String> calls = code.getMethodCallsFromSelf().stream()
					.filter(RuntimeHintsTests::isJsonCall)
					.map((call) -> call.getName())
					.collect(Collectors.toSet());
				if (calls.stream().anyMatch(READS::contains)) {
					code.getReferencedClassObjects().forEach((reference) -> roots.add(reference.getRawType()));
				}
				if (calls.stream().anyMatch(WRITES::contains)) {
					code.getConstructorCallsFromSelf().forEach((call) -> roots.add(call.getTargetOwner()));
					code.getMethodCallsFromSelf().stream()
						.flatMap((call) -> call.getTarget().resolveMember().stream())
						.forEach((method) -> roots.addAll(method.getReturnType().getAllInvolvedRawTypes()));
				}
			}
		}
		Set<JavaClass> bound = new HashSet<>();
		roots.stream().filter(RuntimeHintsTests::isOwnValueType).forEach((type) -> follow(type, bound));
		return bound;
	}

	private static void follow(JavaClass type, Set<JavaClass> bound) {
		if (!isOwnValueType(type) || !bound.add(type)) {
			return;
		}
		if (type.isInterface()) {
			type.getSubclasses().forEach((implementation) -> follow(implementation, bound));
			return;
		}
		type.getFields().stream()
			.filter((field) -> !field.getModifiers().contains(JavaModifier.STATIC))
			.forEach((field) -> field.getType().getAllInvolvedRawTypes().forEach((component) -> follow(component, bound)));
	}

	/** A record of the library, or an interface that records implement; not its engine's objects. */
	private static boolean isOwnValueType(JavaClass type) {
		return type.getPackageName().startsWith("dev.llmresilience") && !type.isEnum()
				&& (type.isRecord() || type.isInterface() && type.getSubclasses().stream().allMatch(JavaClass::isRecord)
						&& !type.getSubclasses().isEmpty());
	}

	private static boolean hasJacksonAnnotation(JavaClass type) {
		return Stream.concat(Stream.of(type), Stream.concat(type.getFields().stream(), type.getCodeUnits().stream()))
			.anyMatch((member) -> member.getAnnotations().stream()
				.anyMatch((annotation) -> annotation.getRawType().getPackageName().startsWith("com.fasterxml.jackson.annotation")));
	}

	private static boolean isJsonCall(JavaMethodCall call) {
		String owner = call.getTargetOwner().getName();
		return owner.startsWith("tools.jackson.") || owner.equals("dev.llmresilience.protocol.WireJson");
	}

	/** The hints Spring's AOT collects: every registrar in aot.factories, and what the endpoints declare. */
	private static RuntimeHints collected() {
		RuntimeHints hints = new RuntimeHints();
		AotServices.factories(CLASS_LOADER).load(RuntimeHintsRegistrar.class)
			.forEach((registrar) -> registrar.registerHints(hints, CLASS_LOADER));
		Class<?>[] endpoints = MAIN.stream().filter((type) -> type.isAnnotatedWith(Endpoint.class)).map(JavaClass::reflect)
			.toArray(Class<?>[]::new);
		new ReflectiveRuntimeHintsRegistrar().registerRuntimeHints(hints, endpoints);
		return hints;
	}

}
