package dev.llmresilience.engine;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * A {@link KilledReplicaProcess} seen from the test: started at once (it warms up on its own),
 * told to go, read line by line, and killed with SIGKILL. What it printed is kept, the events it
 * published among it.
 */
final class ChildReplica {

	private final Process process;

	private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

	private final StringBuffer said = new StringBuffer();

	/** Tickets this child published completion events for, with the answers. */
	private final Map<String, List<String>> completed = new ConcurrentHashMap<>();

	private final Map<String, Integer> failed = new ConcurrentHashMap<>();

	private final Thread reader = new Thread(this::read, "child-replica-output");

	private ChildReplica(Process process) {
		this.process = process;
		this.reader.setDaemon(true);
		this.reader.start();
	}

	/**
	 * Start a child JVM, as small as it can be: no web server, the C1 compiler only, a serial GC,
	 * and the classes of the {@link JavaCommand}'s archive mapped rather than loaded.
	 * @param java how to start it
	 * @param redisPort the Redis port
	 * @param warmUrl the provider's base URL for warming up
	 * @param baseUrl the provider's base URL
	 * @param keyPrefix the fleet's key prefix
	 * @return the child, warming up
	 */
	static ChildReplica start(JavaCommand java, int redisPort, String warmUrl, String baseUrl, String keyPrefix) {
		return new ChildReplica(java.start(List.of(), redisPort, warmUrl, baseUrl, keyPrefix));
	}

	/**
	 * How child JVMs are started: most of a child's CPU goes to loading and linking classes, and
	 * the machine that runs the tests is small and busy, so the classes a child loads are archived
	 * once (a dynamic CDS archive, dumped by a first child that exits normally) and mapped by every
	 * child after it. CDS archives classes from jars only: the class path's directories (the
	 * project's classes) are packed into a jar first. Without an archive (it could not be made)
	 * children start as usual, only slower.
	 */
	static final class JavaCommand {

		private final String executable = ProcessHandle.current()
			.info()
			.command()
			.orElse(System.getProperty("java.home") + "/bin/java");

		private final String classPath;

		private final List<String> options;

		private JavaCommand(String classPath, List<String> options) {
			this.classPath = classPath;
			this.options = options;
		}

		/**
		 * Pack the class path and archive what a child loads, once.
		 * @param redisPort the Redis port the archiving child warms up on
		 * @param warmUrl the provider's base URL for warming up
		 * @param keyPrefix a key prefix
		 * @return how to start children
		 */
		static JavaCommand prepare(int redisPort, String warmUrl, String keyPrefix) {
			try {
				Path dir = Files.createTempDirectory("llm-kill-children");
				String classPath = packed(dir.resolve("classes.jar"));
				Path archive = dir.resolve("children.jsa");
				JavaCommand plain = new JavaCommand(classPath, List.of());
				Process archiving = plain.start(List.of("-XX:ArchiveClassesAtExit=" + archive), redisPort, warmUrl, warmUrl,
						keyPrefix);
				ChildReplica first = new ChildReplica(archiving);
				first.await("READY", 180);
				archiving.getOutputStream().write("EXIT\n".getBytes(StandardCharsets.UTF_8));
				archiving.getOutputStream().flush();
				if (archiving.waitFor(120, TimeUnit.SECONDS) && Files.size(archive) > 0) {
					return new JavaCommand(classPath, List.of("-XX:SharedArchiveFile=" + archive));
				}
				archiving.destroyForcibly();
				System.out.println("Child JVMs start without a CDS archive; the archiving child said:\n" + first.said);
				return plain;
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}

		private static String packed(Path jar) throws IOException {
			List<String> entries = new ArrayList<>();
			try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
				Set<String> names = new HashSet<>();
				for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
					Path path = Path.of(entry);
					if (!Files.isDirectory(path)) {
						entries.add(entry);
						continue;
					}
					try (Stream<Path> files = Files.walk(path)) {
						for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
							String name = path.relativize(file).toString().replace(File.separatorChar, '/');
							// the first on the class path wins, as it does for the class loader
							if (names.add(name)) {
								out.putNextEntry(new JarEntry(name));
								Files.copy(file, out);
								out.closeEntry();
							}
						}
					}
				}
			}
			entries.add(0, jar.toString());
			return String.join(File.pathSeparator, entries);
		}

		private Process start(List<String> extra, int redisPort, String warmUrl, String baseUrl, String keyPrefix) {
			List<String> command = new ArrayList<>(List.of(this.executable, "-Xmx192m", "-XX:TieredStopAtLevel=1",
					"-XX:+UseSerialGC", "-Xshare:auto", "-XX:-UsePerfData"));
			command.addAll(this.options);
			command.addAll(extra);
			command.addAll(List.of("-cp", this.classPath, KilledReplicaProcess.class.getName(), String.valueOf(redisPort),
					warmUrl, baseUrl, keyPrefix));
			try {
				return new ProcessBuilder(command).redirectErrorStream(true).start();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

	}

	private void read() {
		try (BufferedReader in = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			for (String line = in.readLine(); line != null; line = in.readLine()) {
				if (line.startsWith("COMPLETED ")) {
					String[] parts = line.split(" ", 3);
					this.completed.computeIfAbsent(parts[1], (ticket) -> new CopyOnWriteArrayList<>()).add(parts[2]);
				}
				else if (line.startsWith("FAILED ")) {
					this.failed.merge(line.substring("FAILED ".length()), 1, Integer::sum);
				}
				this.said.append(line).append('\n');
				this.lines.add(line);
			}
		}
		catch (IOException ex) {
			// the child is gone
		}
	}

	/**
	 * Wait for a line that starts so.
	 * @param prefix how it starts
	 * @param seconds how long to wait
	 * @return the line
	 * @throws AssertionError naming what the child said, if no such line came
	 */
	String await(String prefix, long seconds) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
		while (System.nanoTime() < deadline) {
			String line = this.lines.poll(100, TimeUnit.MILLISECONDS);
			if (line != null && line.startsWith(prefix)) {
				return line;
			}
			if (line == null && !this.process.isAlive() && this.lines.isEmpty()) {
				break;
			}
		}
		throw new AssertionError("The child replica printed no '" + prefix + "' line; it said:\n" + this.said);
	}

	void go(String replica, String prompt) {
		try {
			OutputStream in = this.process.getOutputStream();
			in.write(("GO " + replica + " " + prompt + "\n").getBytes(StandardCharsets.UTF_8));
			in.flush();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * SIGKILL, and wait until the child is gone.
	 * @return its exit value (137 after a SIGKILL)
	 */
	int kill() throws InterruptedException {
		this.process.destroyForcibly();
		if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
			throw new AssertionError("The child replica survived SIGKILL for 30 s");
		}
		// what it printed before it died is still in the pipe: read to its end
		this.reader.join(TimeUnit.SECONDS.toMillis(10));
		return this.process.exitValue();
	}

	List<String> completed(String ticket) {
		return this.completed.getOrDefault(ticket, List.of());
	}

	int failed(String ticket) {
		return this.failed.getOrDefault(ticket, 0);
	}

}
