-- A deferred request's attempt failed and it waits again: keep its attempts, unless it has ended.
-- KEYS[1] the entry; ARGV[1] the entry as JSON. Returns 1 if saved.
if redis.call('HGET', KEYS[1], 'state') ~= 'PENDING' then
  return 0
end
redis.call('HSET', KEYS[1], 'json', ARGV[1])
return 1
