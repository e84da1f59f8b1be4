package dev.llmresilience.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The shell commands of one README section, read from the file and run as written: a small
 * interpreter for exactly the shell the README uses (curl with {@code -s -N -X -H -d}, a pipe into
 * {@code grep -E}, {@code ; echo}, {@code for i in 1 2 3; do ... done}, {@code sleep}, a variable
 * set and used, comments, line continuations), so that the walkthrough runs verbatim with only a
 * JDK (no shell or curl needed on CI). Anything else in the section fails the test.
 */
final class ReadmeScript {

	private static final Pattern LOOP = Pattern.compile("for \\w+ in ((?:\\S+ ?)+); do");

	/** HTTP/1.1 as curl speaks it to an http:// URL (the JDK's default, HTTP/2, asks for an h2c upgrade first). */
	private static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private ReadmeScript() {
	}

	/**
	 * The commands of every {@code bash} block of a section, loops unrolled, comments dropped.
	 * @param readme the README
	 * @param heading the section's heading line, e.g. {@code ## Five-minute walkthrough}
	 * @return the commands in the order they run
	 */
	static List<String> commands(Path readme, String heading) {
		List<String> lines;
		try {
			lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		int start = lines.indexOf(lines.stream().filter((line) -> line.startsWith(heading)).findFirst()
			.orElseThrow(() -> new IllegalStateException("No section '" + heading + "' in " + readme)));
		List<String> script = new ArrayList<>();
		boolean inBlock = false;
		for (String line : lines.subList(start + 1, lines.size())) {
			if (!inBlock && line.startsWith("## ")) {
				break;
			}
			if (line.startsWith("```")) {
				inBlock = !inBlock && line.equals("```bash");
				continue;
			}
			if (inBlock) {
				script.add(line);
			}
		}
		return unroll(joinContinuations(script));
	}

	private static List<String> joinContinuations(List<String> lines) {
		List<String> joined = new ArrayList<>();
		StringBuilder current = new StringBuilder();
		for (String line : lines) {
			String code = stripComment(line).strip();
			if (code.endsWith("\\")) {
				current.append(code, 0, code.length() - 1).append(' ');
				continue;
			}
			current.append(code);
			String command = current.toString().strip().replaceAll("\\s+", " ");
			if (!command.isEmpty()) {
				joined.add(command);
			}
			current.setLength(0);
		}
		return joined;
	}

	private static List<String> unroll(List<String> lines) {
		List<String> commands = new ArrayList<>();
		for (int i = 0; i < lines.size(); i++) {
			var loop = LOOP.matcher(lines.get(i));
			if (!loop.matches()) {
				commands.add(lines.get(i));
				continue;
			}
			int end = lines.subList(i, lines.size()).indexOf("done") + i;
			List<String> body = lines.subList(i + 1, end);
			for (String ignored : loop.group(1).strip().split(" ")) {
				commands.addAll(body);
			}
			i = end;
		}
		return commands;
	}

	// A '#' outside quotes that starts a word begins a comment.
	static String stripComment(String line) {
		char quote = 0;
		for (int i = 0; i < line.length(); i++) {
			char c = line.charAt(i);
			if (quote != 0) {
				quote = (c == quote) ? 0 : quote;
			}
			else if (c == '\'' || c == '"') {
				quote = c;
			}
			else if (c == '#' && (i == 0 || Character.isWhitespace(line.charAt(i - 1)))) {
				return line.substring(0, i);
			}
		}
		return line;
	}

	/**
	 * Run one curl command (with an optional {@code | grep -E} and {@code ; echo}) against the
	 * application on the given port instead of 8080.
	 * @param command the command as the README has it
	 * @param port the application's port
	 * @param variables shell variables the command may use ({@code $TICKET})
	 * @return the status and the output (the grep's when there is one)
	 */
	static Output curl(String command, int port, Map<String, String> variables) {
		return curl(command, port, variables, Duration.ofSeconds(30));
	}

	/**
	 * Run a curl command of the README against the application, waiting at most {@code timeout}
	 * for its answer.
	 * @param command the command as the README has it
	 * @param port the application's port
	 * @param variables shell variables the command may use ({@code $TICKET})
	 * @param timeout how long its answer may take
	 * @return the status and the output (the grep's when there is one)
	 */
	static Output curl(String command, int port, Map<String, String> variables, Duration timeout) {
		String line = command.endsWith("; echo") ? command.substring(0, command.length() - "; echo".length()) : command;
		for (Map.Entry<String, String> variable : variables.entrySet()) {
			line = line.replace("$" + variable.getKey(), variable.getValue());
		}
		List<List<String>> pipeline = split(words(line), "|");
		List<String> curl = pipeline.get(0);
		if (!curl.get(0).equals("curl") || pipeline.size() > 2) {
			throw new IllegalArgumentException("Not a command this test can run: " + command);
		}
		String method = "GET";
		String url = null;
		String body = null;
		HttpRequest.Builder request = HttpRequest.newBuilder().timeout(timeout);
		for (int i = 1; i < curl.size(); i++) {
			String word = curl.get(i);
			switch (word) {
				case "-s", "-N" -> {
				}
				case "-H" -> {
					String[] header = curl.get(++i).split(":\\s*", 2);
					request.header(header[0], header[1]);
				}
				case "-d" -> body = curl.get(++i);
				default -> {
					if (word.startsWith("-X")) {
						method = word.substring(2);
					}
					else if (word.startsWith("localhost:8080/")) {
						url = "http://localhost:" + port + word.substring("localhost:8080".length());
					}
					else {
						throw new IllegalArgumentException("Unknown curl argument '" + word + "' in: " + command);
					}
				}
			}
		}
		if (url == null) {
			throw new IllegalArgumentException("No localhost:8080 URL in: " + command);
		}
		if (body != null && method.equals("GET")) {
			method = "POST";
		}
		request.uri(URI.create(url))
			.method(method, (body != null) ? HttpRequest.BodyPublishers.ofString(body) : HttpRequest.BodyPublishers.noBody());
		try {
			HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
			String output = response.body();
			if (pipeline.size() == 2) {
				output = grep(pipeline.get(1), output, command);
			}
			return new Output(response.statusCode(), output);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static String grep(List<String> grep, String input, String command) {
		if (grep.size() != 3 || !grep.get(0).equals("grep") || !grep.get(1).equals("-E")) {
			throw new IllegalArgumentException("Only 'grep -E pattern' is supported: " + command);
		}
		Pattern pattern = Pattern.compile(grep.get(2));
		return input.lines().filter((line) -> pattern.matcher(line).find()).collect(Collectors.joining("\n"));
	}

	private static List<List<String>> split(List<String> words, String separator) {
		List<List<String>> parts = new ArrayList<>();
		parts.add(new ArrayList<>());
		for (String word : words) {
			if (word.equals(separator)) {
				parts.add(new ArrayList<>());
			}
			else {
				parts.get(parts.size() - 1).add(word);
			}
		}
		return parts;
	}

	// Shell words: blanks separate them, quotes group (and are removed), a lone | is its own word.
	static List<String> words(String line) {
		List<String> words = new ArrayList<>();
		StringBuilder word = new StringBuilder();
		boolean inWord = false;
		char quote = 0;
		for (char c : line.toCharArray()) {
			if (quote != 0) {
				if (c == quote) {
					quote = 0;
				}
				else {
					word.append(c);
				}
			}
			else if (c == '\'' || c == '"') {
				quote = c;
				inWord = true;
			}
			else if (Character.isWhitespace(c)) {
				if (inWord) {
					words.add(word.toString());
					word.setLength(0);
					inWord = false;
				}
			}
			else {
				word.append(c);
				inWord = true;
			}
		}
		if (inWord) {
			words.add(word.toString());
		}
		return words;
	}

	/**
	 * What a command printed.
	 *
	 * @param status the HTTP status
	 * @param text the body, or the grep's output
	 */
	record Output(int status, String text) {
	}

}
