-- Hand again to this replica messages the group holds for it and it never heard of (their reply was
-- lost), as a takeover hands them: still idle for ARGV[3] ms (else something handed them meanwhile,
-- and that one counts), their idle time then starting again. Read after deferred-take.lua.
-- KEYS[1] the stream; ARGV[1] group, ARGV[2] this replica, ARGV[3] idle for at least (ms), ARGV[4]
-- entry key prefix, ARGV[5..] the ids
-- Returns {id, digest, ticket, json, ...}: pending requests, and ended ones whose event is due on
-- their message (the hash's 'event' names it); others leave the stream.
local taken = {}
for _, message in ipairs(redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), unpack(ARGV, 5))) do
  take(taken, KEYS[1], ARGV[1], ARGV[4], message)
end
return taken
