-- This replica is alive, by Redis's own clock (the replicas' clocks may disagree).
-- KEYS[1] the replicas (sorted set: name -> last heartbeat, ms)
-- ARGV[1] this replica, ARGV[2] how long a replica may go unheard (ms)
-- Returns {now ms, replicas heard from within ARGV[2], 1 if Redis did not know this replica}
-- (new, or Redis lost its data, or the others took it for gone)
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local added = redis.call('ZADD', KEYS[1], now, ARGV[1])
return {now, redis.call('ZCOUNT', KEYS[1], now - tonumber(ARGV[2]), '+inf'), added}
