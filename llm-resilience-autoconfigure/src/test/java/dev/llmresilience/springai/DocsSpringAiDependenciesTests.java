package dev.llmresilience.springai;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.model.ChatModel;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dependency snippet of docs/spring-ai.md is what the build uses: the BOM and its version are
 * the parent pom's, and the artifact it names is the one {@code ChatClient} comes from (so a reader
 * who copies it compiles {@code ChatClient.create(chatModel)}).
 */
class DocsSpringAiDependenciesTests {

	private static final Path DOC = Path.of(System.getProperty("docs", "../docs"), "spring-ai.md");

	private static final Path PARENT_POM = Path.of(System.getProperty("parent.pom", "../pom.xml"));

	@Test
	void snippetImportsTheBomTheBuildUsesAndNamesTheArtifactOfChatClient() throws IOException {
		String snippet = xmlBlockUnder("## Dependencies");
		List<String> artifacts = all(snippet, "<artifactId>([^<]+)</artifactId>");
		assertThat(artifacts).as("the snippet's artifacts").containsExactly("spring-ai-bom", "spring-ai-client-chat");
		assertThat(all(snippet, "<groupId>([^<]+)</groupId>")).containsOnly("org.springframework.ai");
		String buildVersion = all(Files.readString(PARENT_POM), "<spring-ai.version>([^<]+)</spring-ai.version>").get(0);
		assertThat(all(snippet, "<version>([^<]+)</version>")).as("the BOM's version, as the parent pom has it")
			.containsExactly(buildVersion);
		assertThat(snippet).contains("<type>pom</type>", "<scope>import</scope>");
		assertThat(jarOf(ChatClient.class)).as("the jar ChatClient comes from")
			.endsWith("spring-ai-client-chat-" + buildVersion + ".jar");
		assertThat(jarOf(ChatModel.class)).as("the jar ChatModel comes from, which spring-ai-client-chat brings")
			.endsWith("spring-ai-model-" + buildVersion + ".jar");
	}

	private static String xmlBlockUnder(String heading) throws IOException {
		List<String> lines = Files.readAllLines(DOC, StandardCharsets.UTF_8);
		int start = lines.indexOf(heading);
		assertThat(start).as("section %s in %s", heading, DOC).isNotNegative();
		int open = start + 1;
		while (!lines.get(open).equals("```xml")) {
			assertThat(lines.get(open)).as("no other section before the snippet").doesNotStartWith("## ");
			open++;
		}
		int close = open + 1;
		while (!lines.get(close).equals("```")) {
			close++;
		}
		return String.join("\n", lines.subList(open + 1, close));
	}

	private static List<String> all(String text, String regex) {
		Matcher matcher = Pattern.compile(regex).matcher(text);
		return matcher.results().map((result) -> result.group(1).trim()).toList();
	}

	private static String jarOf(Class<?> type) {
		return type.getProtectionDomain().getCodeSource().getLocation().getPath();
	}

}
