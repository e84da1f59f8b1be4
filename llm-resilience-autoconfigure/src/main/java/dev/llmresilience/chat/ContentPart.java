package dev.llmresilience.chat;

import java.io.Serializable;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One part of a message whose content is more than one text: a piece of text or an image given by
 * URL (an {@code https:} URL or a {@code data:} URL with the image inline).
 */
public sealed interface ContentPart extends Serializable permits ContentPart.Text, ContentPart.ImageUrl {

	/**
	 * A text part.
	 * @param text the text
	 * @return the part
	 */
	static ContentPart text(String text) {
		return new Text(text);
	}

	/**
	 * An image part.
	 * @param url an {@code https:} URL or a {@code data:image/...;base64,...} URL
	 * @return the part, with the provider's default detail
	 */
	static ContentPart imageUrl(String url) {
		return new ImageUrl(url, null);
	}

	/**
	 * A piece of text.
	 *
	 * @param text the text
	 */
	record Text(String text) implements ContentPart {

		public Text {
			Objects.requireNonNull(text, "text must not be null");
		}

	}

	/**
	 * An image, by URL.
	 *
	 * @param url an {@code https:} URL or a {@code data:} URL
	 * @param detail {@code low}, {@code high} or {@code auto}, or {@code null} for the provider's default
	 */
	record ImageUrl(String url, @Nullable String detail) implements ContentPart {

		public ImageUrl {
			Objects.requireNonNull(url, "url must not be null");
		}

	}

}
