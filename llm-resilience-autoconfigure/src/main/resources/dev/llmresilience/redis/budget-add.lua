-- Add a replica's spending to the day's total, once: a report whose reply was lost (a timeout) and
-- that is sent again is not added twice.
-- KEYS[1] the day (hash: total in 10^-10 units of the prices' currency, and per replica the last
-- report added); ARGV[1] amount, ARGV[2] replica, ARGV[3] the report's number (1, 2, ...), ARGV[4]
-- time to live (ms)
-- Returns the day's total, as a string (exact: it never passes through a Lua number)
local last = tonumber(redis.call('HGET', KEYS[1], 'seq:' .. ARGV[2]) or '0')
if tonumber(ARGV[3]) > last then
  redis.call('HINCRBY', KEYS[1], 'total', ARGV[1])
  redis.call('HSET', KEYS[1], 'seq:' .. ARGV[2], ARGV[3])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
return redis.call('HGET', KEYS[1], 'total') or '0'
