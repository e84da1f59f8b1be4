package dev.llmresilience.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * This JVM's open file descriptors by kind, from the targets of {@code /proc/self/fd}'s links, a
 * socket told by its ports in {@code /proc/self/net/tcp} and {@code tcp6}: to or from the providers
 * (both ends are in this JVM; by state when not ESTABLISHED), to Redis, listening, other TCP (by
 * state), not TCP (Unix sockets) or closed (out of the tables, its descriptor still open); pipes;
 * each kind of anonymous inode ({@code [eventpoll]}, {@code [eventfd]}, ...); jar files; other
 * files. Empty where there is no {@code /proc} (not Linux).
 */
final class OpenFiles {

	static final String PROVIDERS = "socket to/from the providers";

	static final String REDIS = "socket to Redis";

	static final String LISTENING = "socket listening";

	static final String PIPE = "pipe";

	private static final String[] STATES = { "?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
			"TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING" };

	private final Set<Integer> providerPorts;

	private final int redisPort;

	OpenFiles(Set<Integer> providerPorts, int redisPort) {
		this.providerPorts = providerPorts;
		this.redisPort = redisPort;
	}

	/**
	 * The count of each kind (sorted by kind). The descriptors are read before the TCP tables; a
	 * socket the tables lack is read again: closed meanwhile (a pool letting hundreds go at once),
	 * it is not counted, and the tables are read again for one not in them yet (made, not yet
	 * connecting). What is left is a socket that is not TCP, or one held open after its connection
	 * was gone from the tables.
	 */
	Map<String, Long> byKind() {
		Map<Path, String> targets = new LinkedHashMap<>();
		try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
			for (Path fd : (Iterable<Path>) fds::iterator) {
				String target = target(fd);
				if (target != null) {
					targets.put(fd, target);
				}
			}
		}
		catch (IOException ex) {
			return Map.of();
		}
		Map<String, String> sockets = sockets();
		if (targets.values().stream().anyMatch((target) -> unknown(target, sockets))) {
			targets.entrySet()
				.removeIf((entry) -> unknown(entry.getValue(), sockets) && !entry.getValue().equals(target(entry.getKey())));
			sockets.putAll(sockets());
		}
		Map<String, Long> kinds = new TreeMap<>();
		targets.values().forEach((target) -> kinds.merge(kind(target, sockets), 1L, Long::sum));
		return kinds;
	}

	private static String target(Path fd) {
		try {
			return Files.readSymbolicLink(fd).toString();
		}
		catch (IOException ex) {
			return null; // closed meanwhile (the listing's own descriptor among them)
		}
	}

	private static boolean unknown(String target, Map<String, String> sockets) {
		return target.startsWith("socket:[") && !sockets.containsKey(inode(target));
	}

	/** The descriptors of {@code kinds} besides the providers' connections (both ends), in any state. */
	static long besidesProviders(Map<String, Long> kinds) {
		return kinds.entrySet()
			.stream()
			.filter((entry) -> !entry.getKey().startsWith(PROVIDERS))
			.mapToLong(Map.Entry::getValue)
			.sum();
	}

	/** The providers' connections in {@code kinds} in a state other than ESTABLISHED (e.g. CLOSE_WAIT). */
	static long providersNotEstablished(Map<String, Long> kinds) {
		return kinds.entrySet()
			.stream()
			.filter((entry) -> entry.getKey().startsWith(PROVIDERS) && !entry.getKey().equals(PROVIDERS))
			.mapToLong(Map.Entry::getValue)
			.sum();
	}

	private static String inode(String target) {
		return target.substring(8, target.length() - 1);
	}

	private static String kind(String target, Map<String, String> sockets) {
		if (target.startsWith("socket:[")) {
			return sockets.getOrDefault(inode(target), "socket not TCP, or closed");
		}
		if (target.startsWith("pipe:")) {
			return PIPE;
		}
		if (target.startsWith("anon_inode:")) {
			return target;
		}
		if (target.endsWith(".jar")) {
			return "jar";
		}
		return "file " + target;
	}

	/** Each TCP socket's inode and kind. */
	private Map<String, String> sockets() {
		Map<String, String> sockets = new HashMap<>();
		for (String table : List.of("/proc/self/net/tcp", "/proc/self/net/tcp6")) {
			List<String> lines;
			try {
				lines = Files.readAllLines(Path.of(table));
			}
			catch (IOException ex) {
				continue;
			}
			for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
				String[] fields = line.trim().split("\\s+");
				if (fields.length < 10) {
					continue;
				}
				int local = port(fields[1]);
				int remote = port(fields[2]);
				int state = Integer.parseInt(fields[3], 16);
				String kind;
				if (state == 10) {
					kind = LISTENING;
				}
				else if (this.providerPorts.contains(local) || this.providerPorts.contains(remote)) {
					kind = (state == 1) ? PROVIDERS : PROVIDERS + " " + name(state);
				}
				else if (remote == this.redisPort) {
					kind = REDIS;
				}
				else {
					kind = "socket other TCP " + name(state);
				}
				sockets.put(fields[9], kind);
			}
		}
		return sockets;
	}

	private static String name(int state) {
		return (state < STATES.length) ? STATES[state] : Integer.toString(state);
	}

	private static int port(String address) {
		return Integer.parseInt(address.substring(address.indexOf(':') + 1), 16);
	}

}
