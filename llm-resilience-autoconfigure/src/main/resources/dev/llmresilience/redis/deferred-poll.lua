-- Take new requests off the stream for this replica (the group hands each to one replica only).
-- KEYS[1] the stream; ARGV[1] group, ARGV[2] this replica, ARGV[3] how many, ARGV[4] entry key prefix
-- Returns {id, digest, ticket, json, ...} of the pending ones (digest: the entry's key after the
-- prefix); requests that ended meanwhile are dropped.
local read = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', tonumber(ARGV[3]), 'STREAMS', KEYS[1], '>')
local taken = {}
if not read then
  return taken
end
for _, message in ipairs(read[1][2]) do
  local id = message[1]
  local entry = ARGV[4] .. message[2][2]
  if redis.call('HGET', entry, 'state') == 'PENDING' then
    table.insert(taken, id)
    table.insert(taken, message[2][2])
    table.insert(taken, redis.call('HGET', entry, 'ticket') or '')
    table.insert(taken, redis.call('HGET', entry, 'json') or '')
  else
    redis.call('XACK', KEYS[1], ARGV[1], id)
    redis.call('XDEL', KEYS[1], id)
  end
end
return taken
