-- A replica opened one endpoint's breaker on its own evidence of a hang (no first token for far
-- longer than first tokens take, from enough calls at once): the fleet opens it as if its window
-- had, the replica leading its half-open phase, unless the fleet holds a state already (an open
-- decided meanwhile, a state set by hand), which the replica then follows.
-- KEYS[1] the window, KEYS[2] the fleet state; ARGV[1] replica, ARGV[2] the evidence, ARGV[3] how
-- long the fleet's OPEN lasts (ms: two waits), ARGV[4] channel, ARGV[5] endpoint
-- Returns {'OPENED', why}, or {state, by, why} of the state the fleet holds.
local held = redis.call('HMGET', KEYS[2], 'state', 'by', 'why')
if held[1] and held[1] ~= 'CLOSED' then
  return {held[1], held[2] or '', held[3] or ''}
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[2], 'state', 'OPEN', 'by', ARGV[1], 'why', ARGV[2])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
redis.call('PUBLISH', ARGV[4], 'breaker|OPEN|' .. ARGV[1] .. '|' .. ARGV[5] .. '|' .. ARGV[2])
return {'OPENED', ARGV[2]}
