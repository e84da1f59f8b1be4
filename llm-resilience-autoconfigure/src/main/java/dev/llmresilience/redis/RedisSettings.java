package dev.llmresilience.redis;

import java.time.Duration;

/**
 * How this replica uses Redis.
 *
 * @param keyPrefix the prefix of every key and of the channel
 * @param replica this replica's name, unique in the fleet
 * @param timeout the longest wait for one command
 * @param heartbeat how often this replica tells the others it is alive, and checks Redis
 * @param replicaTimeout how long a replica may go unheard before the others take over its deferred requests
 */
public record RedisSettings(String keyPrefix, String replica, Duration timeout, Duration heartbeat,
		Duration replicaTimeout) {
}
