-- Add a replica's recorded outcomes to the fleet's window of one endpoint and decide whether the
-- fleet opens it. The fleet opens only on a provider outage, not on one replica's own fault:
--   1. the window holds at least min(minimum-number-of-calls, sliding-window-size) outcomes,
--   2. their failure rate is at least failure-rate-threshold,
--   3. the failures come from at least two replicas, and
--   4. no replica with at least two outcomes in the window has a failure rate under the threshold
--      (the provider answers that replica, so the others' failures are theirs).
-- KEYS[1] the window (list of '<0|1><replica>', newest first), KEYS[2] the fleet state (hash)
-- ARGV[1] replica, ARGV[2] outcomes ('0' success, '1' failure, oldest first), ARGV[3] window size,
-- ARGV[4] minimum calls, ARGV[5] threshold (percent), ARGV[6] how long the fleet's OPEN lasts
-- (ms: two waits in open state, the replica that decided it runs the half-open phase after one),
-- ARGV[7] channel, ARGV[8] endpoint
-- Returns {'OPENED', why} when these outcomes opened it, {state, by, why} when the fleet already
-- holds one (OPEN, FORCED_OPEN, DISABLED: the outcomes are not counted), else {'COUNTED', why}.
local held = redis.call('HMGET', KEYS[2], 'state', 'by', 'why')
local state = held[1]
if state and state ~= 'CLOSED' then
  return {state, held[2] or '', held[3] or ''}
end
local size = tonumber(ARGV[3])
for i = 1, #ARGV[2] do
  redis.call('LPUSH', KEYS[1], string.sub(ARGV[2], i, i) .. ARGV[1])
end
redis.call('LTRIM', KEYS[1], 0, size - 1)
redis.call('PEXPIRE', KEYS[1], 3600000)
local calls = redis.call('LRANGE', KEYS[1], 0, -1)
if #calls < math.min(tonumber(ARGV[4]), size) then
  return {'COUNTED', 'too few calls'}
end
local threshold = tonumber(ARGV[5])
local failed = 0
local replicas = {}
for _, call in ipairs(calls) do
  local replica = string.sub(call, 2)
  local seen = replicas[replica] or {0, 0}
  seen[1] = seen[1] + 1
  if string.sub(call, 1, 1) == '1' then
    seen[2] = seen[2] + 1
    failed = failed + 1
  end
  replicas[replica] = seen
end
if failed * 100 < threshold * #calls then
  return {'COUNTED', 'failure rate under the threshold'}
end
local failing = 0
local seeing = 0
for _, seen in pairs(replicas) do
  seeing = seeing + 1
  if seen[2] > 0 then
    failing = failing + 1
  end
  if seen[1] >= 2 and seen[2] * 100 < threshold * seen[1] then
    return {'COUNTED', 'a replica is answered'}
  end
end
if failing < 2 then
  return {'COUNTED', 'one replica fails alone'}
end
local why = string.format("failure rate %.1f %% over the fleet's %d calls from %d replicas (threshold %.1f %%)",
  failed * 100 / #calls, #calls, seeing, threshold)
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[2], 'state', 'OPEN', 'by', ARGV[1], 'why', why)
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[6]))
redis.call('PUBLISH', ARGV[7], 'breaker|OPEN|' .. ARGV[1] .. '|' .. ARGV[8] .. '|' .. why)
return {'OPENED', why}
