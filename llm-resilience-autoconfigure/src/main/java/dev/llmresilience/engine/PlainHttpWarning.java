package dev.llmresilience.engine;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.regex.Pattern;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Warns at start-up about a base URL that is plain http to another machine. Plain http is fine to a
 * model on this machine (Ollama or vLLM on localhost), but across a network it carries the key, the
 * prompts and the answers in clear text: worth a WARN, not a refusal, since whether a private
 * network is trusted is the user's call.
 */
final class PlainHttpWarning {

	private static final Log logger = LogFactory.getLog(PlainHttpWarning.class);

	private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

	private PlainHttpWarning() {
	}

	static void warnIfOverTheNetwork(String endpoint, String property, URI baseUrl) {
		if ("http".equalsIgnoreCase(baseUrl.getScheme()) && !isLoopback(baseUrl.getHost())) {
			logger.warn("LLM endpoint '" + endpoint + "': " + property + " is plain http to '" + baseUrl.getHost()
					+ "', which is not this machine: its api-key, prompts and answers cross the network unencrypted. "
					+ "Use https:// unless every network between is trusted.");
		}
	}

	static boolean isLoopback(String host) {
		String name = host.toLowerCase(Locale.ROOT);
		if (name.equals("localhost") || name.endsWith(".localhost")) {
			return true;
		}
		boolean ipv6 = name.startsWith("[") && name.endsWith("]");
		if (!ipv6 && !IPV4.matcher(name).matches()) {
			return false; // another host name: no DNS lookup at start-up to find out more
		}
		try {
			// an address literal is parsed, not looked up
			return InetAddress.getByName(ipv6 ? name.substring(1, name.length() - 1) : name).isLoopbackAddress();
		}
		catch (UnknownHostException ex) {
			return false;
		}
	}

}
