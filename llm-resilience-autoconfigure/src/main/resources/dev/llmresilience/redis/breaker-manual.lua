-- An operator moved one endpoint's breaker by hand: every replica follows.
-- FORCED_OPEN and DISABLED are kept until changed; CLOSED and RESET leave a CLOSED mark for a day,
-- so that a replica back from an outage can tell "closed by hand" from "Redis lost the state".
-- KEYS[1] the window, KEYS[2] the fleet state; ARGV[1] state, ARGV[2] replica, ARGV[3] channel, ARGV[4] endpoint
redis.call('DEL', KEYS[1], KEYS[2])
if ARGV[1] == 'FORCED_OPEN' or ARGV[1] == 'DISABLED' then
  redis.call('HSET', KEYS[2], 'state', ARGV[1], 'by', ARGV[2])
else
  redis.call('HSET', KEYS[2], 'state', 'CLOSED', 'by', ARGV[2])
  redis.call('PEXPIRE', KEYS[2], 86400000)
end
redis.call('PUBLISH', ARGV[3], 'breaker|' .. ARGV[1] .. '|' .. ARGV[2] .. '|' .. ARGV[4])
return 1
