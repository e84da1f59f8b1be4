-- A deferred request ended on this replica: it counts only if no replica ended it first, so that
-- each request completes (and its event is published) once.
-- KEYS[1] the entry, KEYS[2] the stream; ARGV[1] COMPLETED or FAILED, ARGV[2] the entry as JSON,
-- ARGV[3] retention (ms), ARGV[4] the group, ARGV[5] its id on the stream ('' for none), ARGV[6] replica,
-- ARGV[7] why it failed ('' for none); an empty ARGV[2] drops the JSON (an entry that could not be read)
-- Returns 1 if this end counts (also when this replica's own end is sent again after a lost
-- reply), 0 if another replica ended the request first.
local state = redis.call('HGET', KEYS[1], 'state')
if ARGV[5] ~= '' then
  redis.call('XACK', KEYS[2], ARGV[4], ARGV[5])
  redis.call('XDEL', KEYS[2], ARGV[5])
end
if state and state ~= 'PENDING' then
  if redis.call('HGET', KEYS[1], 'by') == ARGV[6] then
    return 1
  end
  return 0
end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'json', ARGV[2], 'by', ARGV[6], 'reason', ARGV[7])
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], 'json')
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
