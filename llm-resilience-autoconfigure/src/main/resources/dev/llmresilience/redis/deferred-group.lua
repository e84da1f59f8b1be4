-- The consumer group of the deferred queue, made with its stream if missing (Redis restarted empty).
-- KEYS[1] the stream; ARGV[1] the group
local made = redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
if type(made) == 'table' and made.err and not string.find(made.err, 'BUSYGROUP') then
  return redis.error_reply(made.err)
end
return 1
