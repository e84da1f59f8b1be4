package dev.llmresilience.openaiapi;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 request over a plain socket, for what an HTTP client library will not send: headers
 * that promise more body than is sent. Each read waits at most {@link #TIMEOUT}, so that a server
 * waiting for the rest of the body fails the test instead of hanging it.
 */
final class RawCall implements AutoCloseable {

	static final Duration TIMEOUT = Duration.ofSeconds(8);

	private final Socket socket = new Socket();

	private final InputStream in;

	private final OutputStream out;

	private RawCall(int port) throws IOException {
		this.socket.connect(new InetSocketAddress("127.0.0.1", port), (int) TIMEOUT.toMillis());
		this.socket.setSoTimeout((int) TIMEOUT.toMillis());
		this.in = this.socket.getInputStream();
		this.out = this.socket.getOutputStream();
	}

	/**
	 * Send a request's headers and the first bytes of its body.
	 * @param port the server's port
	 * @param method the method
	 * @param path the path
	 * @param authorization the {@code Authorization} header, or {@code null} for none
	 * @param contentLength the {@code Content-Length} to declare
	 * @param body the bytes of the body to send now, possibly fewer than declared
	 * @return the call, open
	 */
	static RawCall send(int port, String method, String path, String authorization, long contentLength, byte[] body)
			throws IOException {
		RawCall call = new RawCall(port);
		StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n");
		if (authorization != null) {
			head.append("Authorization: ").append(authorization).append("\r\n");
		}
		head.append("Content-Type: application/json\r\nContent-Length: ").append(contentLength).append("\r\n\r\n");
		call.out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
		call.out.write(body);
		call.out.flush();
		return call;
	}

	/** More of the body. */
	void sendMore(byte[] bytes) throws IOException {
		this.out.write(bytes);
		this.out.flush();
	}

	/**
	 * Read the response: status line, headers and a body of its {@code Content-Length}.
	 * @return the response
	 * @throws SocketTimeoutException when it does not come within {@link #TIMEOUT}
	 */
	Response response() throws IOException {
		String status = line();
		Map<String, String> headers = new LinkedHashMap<>();
		for (String header = line(); !header.isEmpty(); header = line()) {
			int colon = header.indexOf(':');
			headers.put(header.substring(0, colon).trim().toLowerCase(Locale.ROOT), header.substring(colon + 1).trim());
		}
		int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
		byte[] body = this.in.readNBytes(length);
		return new Response(Integer.parseInt(status.split(" ")[1]), headers, new String(body, StandardCharsets.UTF_8));
	}

	/**
	 * Whether the server closed the connection after its response, rather than keep it open to
	 * read (or drain) the rest of the body.
	 * @return true when the connection ends within {@link #TIMEOUT}
	 */
	boolean closedByServer() throws IOException {
		try {
			return this.in.read() == -1;
		}
		catch (SocketTimeoutException ex) {
			return false;
		}
		catch (SocketException ex) {
			// a reset: closed with the unsent rest of the body still announced
			return true;
		}
	}

	private String line() throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		for (int b = this.in.read(); b != '\n'; b = this.in.read()) {
			if (b == -1) {
				throw new IOException("The connection closed before a whole response");
			}
			if (b != '\r') {
				line.write(b);
			}
		}
		return line.toString(StandardCharsets.US_ASCII);
	}

	@Override
	public void close() throws IOException {
		this.socket.close();
	}

	record Response(int status, Map<String, String> headers, String body) {
	}

}
