-- The replica that runs the fleet's half-open phase for an endpoint tells the others how its
-- probes went: REOPENED (they failed: every replica stays open for another round) or RECOVERED
-- (they succeeded: every replica closes). A state set by hand is left alone.
-- KEYS[1] the window, KEYS[2] the fleet state; ARGV[1] REOPENED or RECOVERED, ARGV[2] replica,
-- ARGV[3] channel, ARGV[4] endpoint, ARGV[5] how long the fleet's OPEN lasts (ms: two waits)
local state = redis.call('HGET', KEYS[2], 'state')
if state == 'FORCED_OPEN' or state == 'DISABLED' then
  return 0
end
redis.call('DEL', KEYS[1])
if ARGV[1] == 'REOPENED' then
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[2], 'state', 'OPEN', 'by', ARGV[2], 'why', 'its probes failed')
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[5]))
elseif state == 'OPEN' then
  redis.call('DEL', KEYS[2])
end
redis.call('PUBLISH', ARGV[3], 'breaker|' .. ARGV[1] .. '|' .. ARGV[2] .. '|' .. ARGV[4])
return 1
