-- Hand again to this replica messages the group holds for it and it never heard of (their reply was
-- lost), as a takeover hands them: still idle for ARGV[3] ms (else something handed them meanwhile,
-- and that one counts), their idle time then starting again.
-- KEYS[1] the stream; ARGV[1] group, ARGV[2] this replica, ARGV[3] idle for at least (ms), ARGV[4]
-- entry key prefix, ARGV[5..] the ids
-- Returns {id, digest, ticket, json, ...}: pending requests, and ended ones whose event is due on
-- their message (the hash's 'event' names it); others leave the stream.
local taken = {}
for _, message in ipairs(redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), unpack(ARGV, 5))) do
  local entry = message and (ARGV[4] .. message[2][2])
  if not entry then
    -- deleted from the stream while pending: nothing to run
  elseif redis.call('HGET', entry, 'state') == 'PENDING'
      or redis.call('HGET', entry, 'event') == message[1] then
    table.insert(taken, message[1])
    table.insert(taken, message[2][2])
    table.insert(taken, redis.call('HGET', entry, 'ticket') or '')
    table.insert(taken, redis.call('HGET', entry, 'json') or '')
  else
    redis.call('XACK', KEYS[1], ARGV[1], message[1])
    redis.call('XDEL', KEYS[1], message[1])
  end
end
return taken
