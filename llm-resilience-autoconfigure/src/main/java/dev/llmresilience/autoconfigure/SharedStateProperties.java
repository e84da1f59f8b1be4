package dev.llmresilience.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * State the replicas of the application share, under {@code llm.shared-state}.
 */
@ConfigurationProperties("llm.shared-state")
public class SharedStateProperties {

	/**
	 * Where the breakers' outcomes and states, the call-volume guard, the budget and the deferred
	 * queue live: "local" (each instance its own) or "redis" (shared by every replica, on the
	 * application's Spring Data Redis connection, spring.data.redis.*).
	 */
	private Type type = Type.LOCAL;

	/**
	 * Prefix of every Redis key and of the pub/sub channel: two applications on one Redis share
	 * state only if they have the same prefix. Letters, digits and ":_.-"; on Redis Cluster, a hash
	 * tag such as "{llm}:" keeps the keys in one slot, as the scripts need. Default
	 * "llm:{spring.application.name}:" ("llm:application:" when the application has no name), with
	 * every character of the name but letters, digits and ":_.-" replaced by "-".
	 */
	private @Nullable String keyPrefix;

	/**
	 * Longest wait for one Redis command; past it Redis is taken to be unavailable and each replica
	 * goes on with its own state. No call ever waits for Redis.
	 */
	private Duration timeout = Duration.ofMillis(250);

	/** How often each replica tells the others it is alive, and checks that Redis answers. */
	private Duration heartbeat = Duration.ofSeconds(1);

	/**
	 * How long a replica may go unheard before the others take over its deferred requests. At
	 * least twice the heartbeat.
	 */
	private Duration replicaTimeout = Duration.ofSeconds(10);

	/** This replica's name in Redis (its logs and the actuator show it). Default: host name and a random suffix. */
	private @Nullable String replicaName;

	public Type getType() {
		return this.type;
	}

	public void setType(Type type) {
		this.type = type;
	}

	public @Nullable String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(@Nullable String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

	public Duration getHeartbeat() {
		return this.heartbeat;
	}

	public void setHeartbeat(Duration heartbeat) {
		this.heartbeat = heartbeat;
	}

	public Duration getReplicaTimeout() {
		return this.replicaTimeout;
	}

	public void setReplicaTimeout(Duration replicaTimeout) {
		this.replicaTimeout = replicaTimeout;
	}

	public @Nullable String getReplicaName() {
		return this.replicaName;
	}

	public void setReplicaName(@Nullable String replicaName) {
		this.replicaName = replicaName;
	}

	/** Where shared state lives. */
	public enum Type {

		/** Each instance keeps its own state. */
		LOCAL,

		/** The replicas share their state on Redis. */
		REDIS

	}

}
