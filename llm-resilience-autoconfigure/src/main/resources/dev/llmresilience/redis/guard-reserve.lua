-- The call-volume guard's window, fleet-wide: take permits, settle calls made without one, report calls.
-- KEYS[1] the window (hash: granted = permits handed out and calls made without one, used = calls
-- made, and per replica the last report applied and what it was given)
-- ARGV[1] max calls in the window, ARGV[2] permits wanted, ARGV[3] calls made without a permit
-- (negative: unspent permits given back), ARGV[4] calls made since the last report (those included),
-- ARGV[5] replicas alive, ARGV[6] time to live of the window (ms), ARGV[7] replica, ARGV[8] the
-- report's number (each replica numbers its reports 1, 2, ...)
-- A report is applied once: one whose reply was lost (a timeout) and that is sent again is not
-- counted twice. Near the end of the window each replica gets a smaller share, down to one permit,
-- so that few permits sit unspent on one replica while another refuses calls.
-- Returns {permits given, granted, used}
local seq = tonumber(ARGV[8])
local last = tonumber(redis.call('HGET', KEYS[1], 'seq:' .. ARGV[7]) or '0')
if seq <= last then
  local given = 0
  if seq == last then
    given = tonumber(redis.call('HGET', KEYS[1], 'given:' .. ARGV[7]) or '0')
  end
  return {given, tonumber(redis.call('HGET', KEYS[1], 'granted') or '0'), tonumber(redis.call('HGET', KEYS[1], 'used') or '0')}
end
local max = tonumber(ARGV[1])
local granted = tonumber(redis.call('HGET', KEYS[1], 'granted') or '0') + tonumber(ARGV[3])
local remaining = max - granted
local give = 0
if remaining > 0 then
  local share = math.max(1, math.floor(remaining / (2 * math.max(1, tonumber(ARGV[5])))))
  give = math.min(tonumber(ARGV[2]), share, remaining)
end
granted = granted + give
redis.call('HSET', KEYS[1], 'granted', granted, 'seq:' .. ARGV[7], seq, 'given:' .. ARGV[7], give)
local used = redis.call('HINCRBY', KEYS[1], 'used', tonumber(ARGV[4]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[6]))
return {give, granted, used}
