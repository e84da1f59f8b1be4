package dev.llmresilience.autoconfigure;

import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.util.StringUtils;

/**
 * One route, {@code llm.routes.<name>}, in its object form ({@code endpoints}, {@code balance},
 * {@code order}) or its list form ({@code llm.routes.<name>=a,b} or a YAML list: the endpoints in
 * order, tried strictly by priority).
 */
public class RouteProperties {

	/**
	 * The endpoints the route tries, in order. Omitted, every enabled endpoint, by priority then
	 * name, as the implicit default route.
	 */
	private @Nullable List<String> endpoints;

	/**
	 * How the route chooses which of its endpoints of equal priority (equal price with
	 * order=cheapest-first) to try first: "priority" (the route's order), "weighted" (at random, in
	 * proportion to each endpoint's weight) or "least-latency" (the lower peak-EWMA time to first
	 * token of two drawn at random). The others follow in the route's order. Default priority.
	 */
	private String balance = "priority";

	/**
	 * The route's order: "priority" (as listed; endpoints of equal priority form a group) or
	 * "cheapest-first" (by input plus output price per million tokens, unpriced endpoints last;
	 * endpoints of equal price form a group). Default priority.
	 */
	private String order = "priority";

	private boolean listForm;

	public RouteProperties() {
	}

	/**
	 * A route in its list form, as Boot converts {@code llm.routes.<name>=a,b}.
	 * @param endpoints the endpoints' names, separated by commas
	 */
	public RouteProperties(String endpoints) {
		this.endpoints = Arrays.stream(StringUtils.commaDelimitedListToStringArray(endpoints))
			.map(String::trim)
			.filter((name) -> !name.isEmpty())
			.toList();
		this.listForm = true;
	}

	private RouteProperties(List<String> endpoints) {
		this.endpoints = List.copyOf(endpoints);
		this.listForm = true;
	}

	/**
	 * A route in its list form, as the wiring reads {@code llm.routes.<name>[0]=a} (not named
	 * {@code of} or {@code from}, so that Boot's conversion does not take it for a converter).
	 * @param endpoints the endpoints' names
	 * @return the route
	 */
	public static RouteProperties listed(List<String> endpoints) {
		return new RouteProperties(endpoints);
	}

	public @Nullable List<String> getEndpoints() {
		return this.endpoints;
	}

	public void setEndpoints(@Nullable List<String> endpoints) {
		this.endpoints = endpoints;
	}

	public String getBalance() {
		return this.balance;
	}

	public void setBalance(String balance) {
		this.balance = balance;
	}

	public String getOrder() {
		return this.order;
	}

	public void setOrder(String order) {
		this.order = order;
	}

	/**
	 * Whether the route was written as a plain list of endpoint names: its errors then name
	 * {@code llm.routes.<name>} itself.
	 * @return whether it is in list form
	 */
	public boolean listForm() {
		return this.listForm;
	}

}
