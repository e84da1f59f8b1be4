package dev.llmresilience.engine;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.LlmProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.UnboundElementsSourceFilter;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.Environment;

/**
 * Rejects a key under {@code llm.} that nothing binds ({@code llm.endpoints.primary.timout}),
 * naming it, where it was set, and the valid key nearest to it. Boot's binder finds the key
 * ({@link NoUnboundElementsBindHandler}, as {@code ignoreUnknownFields = false} would); this class
 * only adds the suggestion, and leaves alone keys under the prefix of another
 * {@code @ConfigurationProperties} bean (e.g. {@code llm.shared-state}). Environment variables and
 * system properties are not checked, as Boot does not check them either.
 */
final class UnknownKeys {

	private static final String PREFIX = "llm";

	private UnknownKeys() {
	}

	static void check(Environment environment, ListableBeanFactory beans) {
		List<ConfigurationPropertyName> others = otherPrefixes(beans);
		try {
			Binder.get(environment)
				.bind(PREFIX, Bindable.ofInstance(new LlmProperties()),
						new NoUnboundElementsBindHandler(BindHandler.DEFAULT, new UnboundElementsSourceFilter()));
		}
		catch (BindException ex) {
			if (!(ex.getCause() instanceof UnboundConfigurationPropertiesException unbound)) {
				throw ex;
			}
			unbound.getUnboundProperties()
				.stream()
				.filter((property) -> others.stream().noneMatch((other) -> other.isAncestorOf(property.getName())))
				.filter((property) -> !RouteForms.isListElement(property.getName()))
				.sorted(Comparator.comparing((ConfigurationProperty property) -> property.getName().toString()))
				.map(UnknownKeys::unknown)
				.reduce(Unknown::and)
				.ifPresent((unknown) -> {
					throw new LlmConfigurationException(unknown.name(), unknown.problem(), unknown.action() + " " + KEYS);
				});
		}
	}

	/** Where a reader who has the jar, not this repository, finds every key. */
	static final String KEYS = "Every key, with its description, is in META-INF/spring-configuration-metadata.json of "
			+ "the llm-resilience-autoconfigure jar, which IDEs complete from.";

	private static Unknown unknown(ConfigurationProperty property) {
		ConfigurationPropertyName name = property.getName();
		List<String> candidates = new ArrayList<>();
		walk(LlmProperties.class, PREFIX, name, 1, candidates);
		String where = (property.getOrigin() != null) ? " (set in " + property.getOrigin() + ")" : "";
		String nearest = nearest(name.toString(), candidates);
		if (nearest != null) {
			return new Unknown(name.toString(), where + "; did you mean '" + nearest + "'",
					"Rename it to " + nearest + ", or remove it.", false);
		}
		return new Unknown(name.toString(), where,
				"Remove it, or use one of the keys valid there: " + siblings(name, candidates) + ".", false);
	}

	/**
	 * One unknown key, or several reported at once (the first named as the property at fault), so
	 * that two typos take one start to find, not two.
	 * @param name the (first) key
	 * @param details where it was set and the key meant, then the others'
	 * @param action what to do
	 * @param several whether more than one key is reported
	 */
	private record Unknown(String name, String details, String action, boolean several) {

		String problem() {
			return "is not a key of llm-resilience" + this.details;
		}

		Unknown and(Unknown next) {
			String action = (this.several ? this.action : this.name + ": " + this.action) + " " + next.name() + ": "
					+ next.action();
			return new Unknown(this.name, this.details + ". Nor is '" + next.name() + "'" + next.details(), action, true);
		}

	}

	/**
	 * The keys the properties classes accept, with each map key taken from the unknown name at the
	 * same place (so that {@code llm.endpoints.primary.timout} is compared with
	 * {@code llm.endpoints.primary.timeout}, not with a placeholder).
	 */
	private static void walk(Class<?> type, String path, @Nullable ConfigurationPropertyName name, int index,
			List<String> out) {
		for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
			if (descriptor.getReadMethod() == null || descriptor.getName().equals("class")) {
				continue;
			}
			String child = path + "." + DataObjectPropertyName.toDashedForm(descriptor.getName());
			Class<?> propertyType = descriptor.getPropertyType();
			if (isOurs(propertyType)) {
				walk(propertyType, child, name, index + 1, out);
			}
			else if (Map.class.isAssignableFrom(propertyType)) {
				Class<?> valueType = ResolvableType.forMethodReturnType(descriptor.getReadMethod())
					.asMap()
					.getGeneric(1)
					.resolve(Object.class);
				if (!isOurs(valueType)) {
					out.add(child + "." + mapKey(name, index + 1, 1));
					continue;
				}
				// An unbracketed name with a dot (llm.endpoints.gpt-4.1.model) binds as the key
				// "gpt-4", so the keys made of two or three elements are candidates too.
				int keyElements = (name != null) ? Math.min(3, name.getNumberOfElements() - index - 2) : 1;
				for (int elements = 1; elements <= Math.max(1, keyElements); elements++) {
					String key = mapKey(name, index + 1, elements);
					walk(valueType, child + (key.contains(".") ? "[" + key + "]" : "." + key), name,
							index + 1 + elements, out);
				}
			}
			else {
				out.add(child);
			}
		}
	}

	private static String mapKey(@Nullable ConfigurationPropertyName name, int index, int elements) {
		if (name == null || name.getNumberOfElements() < index + elements) {
			return "*";
		}
		List<String> parts = new ArrayList<>();
		for (int i = index; i < index + elements; i++) {
			parts.add(name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL));
		}
		return String.join(".", parts);
	}

	/**
	 * Every key a properties class binds, a map's keys written {@code *}.
	 * @param type the properties class
	 * @param prefix where it is bound, e.g. {@code llm.endpoints.*}
	 * @return the keys
	 */
	static List<String> keysOf(Class<?> type, String prefix) {
		List<String> keys = new ArrayList<>();
		walk(type, prefix, null, 0, keys);
		return keys;
	}

	private static boolean isOurs(Class<?> type) {
		return type.getPackageName().startsWith("dev.llmresilience") && !type.isEnum();
	}

	/**
	 * The name nearest a misspelt one (an endpoint, a route), or {@code null} when none is within a
	 * few typos.
	 * @param unknown the name given
	 * @param names the names there are
	 * @return the nearest, or {@code null}
	 */
	static @Nullable String nearestName(String unknown, Collection<String> names) {
		String best = null;
		int bestDistance = Integer.MAX_VALUE;
		for (String name : names) {
			int distance = distance(uniform(unknown), uniform(name));
			if (distance < bestDistance) {
				best = name;
				bestDistance = distance;
			}
		}
		return (best != null && bestDistance <= Math.max(1, best.length() / 3)) ? best : null;
	}

	/**
	 * Where a property was set, as the unknown keys' report says it: {@code " (set in ...)"}, or
	 * empty when its source does not tell (the command line, a test's properties).
	 * @param environment the environment
	 * @param property the property's name
	 * @return the text, or empty
	 */
	static String origin(Environment environment, String property) {
		ConfigurationPropertyName name = ConfigurationPropertyName.of(property);
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			ConfigurationProperty found = source.getConfigurationProperty(name);
			if (found != null) {
				return (found.getOrigin() != null) ? " (set in " + found.getOrigin() + ")" : "";
			}
		}
		return "";
	}

	private static @Nullable String nearest(String unknown, List<String> candidates) {
		String best = null;
		int bestDistance = Integer.MAX_VALUE;
		for (String candidate : candidates) {
			int distance = distance(uniform(unknown), uniform(candidate));
			if (distance < bestDistance) {
				best = candidate;
				bestDistance = distance;
			}
		}
		// A suggestion farther than a few typos away would mislead more than help.
		return (best != null && bestDistance <= Math.max(2, lastElement(best).length() / 3)) ? best : null;
	}

	private static String siblings(ConfigurationPropertyName name, List<String> candidates) {
		String parent = name.getParent().toString();
		List<String> siblings = candidates.stream()
			.filter((candidate) -> uniform(candidate).startsWith(uniform(parent) + "."))
			.map((candidate) -> candidate.substring(parent.length() + 1))
			.toList();
		return siblings.isEmpty() ? String.join(", ", candidates) : String.join(", ", siblings);
	}

	private static String lastElement(String key) {
		return key.substring(key.lastIndexOf('.') + 1);
	}

	// Boot's relaxed binding treats baseUrl, base-url and base_url alike: so does the comparison.
	private static String uniform(String key) {
		return key.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "").replace("[", ".").replace("]", "");
	}

	private static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int substitution = previous[j - 1] + ((a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

	private static List<ConfigurationPropertyName> otherPrefixes(ListableBeanFactory beans) {
		List<ConfigurationPropertyName> prefixes = new ArrayList<>();
		for (String bean : beans.getBeanNamesForAnnotation(ConfigurationProperties.class)) {
			ConfigurationProperties annotation = beans.findAnnotationOnBean(bean, ConfigurationProperties.class);
			String prefix = (annotation != null) ? annotation.prefix() : "";
			if (prefix.isEmpty() && annotation != null) {
				prefix = annotation.value();
			}
			ConfigurationPropertyName other = ConfigurationPropertyName.adapt(prefix, '.');
			if (!other.isEmpty() && ConfigurationPropertyName.of(PREFIX).isAncestorOf(other)) {
				prefixes.add(other);
			}
		}
		return prefixes;
	}

}
