-- The event of a request whose end counted has been published: its message leaves the stream.
-- KEYS[1] the entry, KEYS[2] the stream; ARGV[1] the group, ARGV[2] the message's id
-- Returns 1. Sent again (a lost reply), or for a message already gone, it changes nothing.
if redis.call('HGET', KEYS[1], 'event') == ARGV[2] then
  redis.call('HDEL', KEYS[1], 'event')
end
redis.call('XACK', KEYS[2], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[2], ARGV[2])
return 1
