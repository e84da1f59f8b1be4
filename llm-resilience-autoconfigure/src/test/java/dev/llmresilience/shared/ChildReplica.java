package dev.llmresilience.shared;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

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
	 * Start a child JVM, as small as it can be: no web server, the C1 compiler only, a serial GC.
	 * @param redisPort the Redis port
	 * @param warmUrl the provider's base URL for warming up
	 * @param baseUrl the provider's base URL
	 * @param keyPrefix the fleet's key prefix
	 * @return the child, warming up
	 */
	static ChildReplica start(int redisPort, String warmUrl, String baseUrl, String keyPrefix) {
		String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
		try {
			return new ChildReplica(new ProcessBuilder(java, "-Xmx192m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
					"-Xshare:auto", "-cp", System.getProperty("java.class.path"), KilledReplicaProcess.class.getName(),
					String.valueOf(redisPort), warmUrl, baseUrl, keyPrefix)
				.redirectErrorStream(true)
				.start());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
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
		System.out.println("CPU " + this.process.info().totalCpuDuration().map(java.time.Duration::toMillis).orElse(-1L));
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
