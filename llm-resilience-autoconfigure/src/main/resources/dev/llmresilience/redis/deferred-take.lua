-- Not a script of its own: read in front of deferred-reclaim.lua and deferred-rehand.lua, the two
-- that claim messages of the deferred stream, so that both read a claimed message the same way.
-- take(taken, stream, group, prefix, message): for a message XCLAIM returned, add {id, digest,
-- ticket, json} to taken when its request is pending, or ended with its event due on this message
-- (the hash's 'event' names it; the JSON then holds the ended entry); any other message leaves the
-- stream. A message deleted from the stream while pending (false) is left alone.
local function take(taken, stream, group, prefix, message)
  if not message then
    return
  end
  local entry = prefix .. message[2][2]
  if redis.call('HGET', entry, 'state') == 'PENDING' or redis.call('HGET', entry, 'event') == message[1] then
    table.insert(taken, message[1])
    table.insert(taken, message[2][2])
    table.insert(taken, redis.call('HGET', entry, 'ticket') or '')
    table.insert(taken, redis.call('HGET', entry, 'json') or '')
  else
    redis.call('XACK', stream, group, message[1])
    redis.call('XDEL', stream, message[1])
  end
end
