-- A pending deferred request joins the fleet's queue: its entry, and its key on the stream, where
-- the consumer group hands it to one replica. The replica that adds it takes the oldest message
-- nobody has taken yet, in the same step: with no backlog (the usual case) that is its own request,
-- which it then runs itself.
-- KEYS[1] the entry (hash: state, ticket, json, id), KEYS[2] the stream; ARGV[1] the ticket's
-- digest (the entry's key after the prefix), ARGV[2] the entry as JSON, ARGV[3] group, ARGV[4] this
-- replica, ARGV[5] entry key prefix, ARGV[6] the ticket
-- Returns {requests on the stream (the fleet's pending count), id, digest, ticket, json} (the last
-- four: the request taken, if any).
-- Idempotent: the replica sends the same add again when it lost the reply (the connection dropped,
-- the command timed out). Then nothing is added, and if the first add handed the request to this
-- replica, this reply hands it again, so that it runs once: here, on the replica the group handed
-- it to, or nowhere if it has ended.
local function taken(reply, id, entry)
  table.insert(reply, id)
  table.insert(reply, string.sub(entry, string.len(ARGV[5]) + 1))
  table.insert(reply, redis.call('HGET', entry, 'ticket') or '')
  table.insert(reply, redis.call('HGET', entry, 'json') or '')
  return reply
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  local reply = {redis.call('XLEN', KEYS[2])}
  local id = redis.call('HGET', KEYS[1], 'id')
  if id and redis.call('HGET', KEYS[1], 'state') == 'PENDING' then
    local held = redis.pcall('XPENDING', KEYS[2], ARGV[3], id, id, 1)
    if type(held) == 'table' and not held.err and held[1] and held[1][2] == ARGV[4] then
      return taken(reply, held[1][1], KEYS[1])
    end
  end
  return reply
end
local id = redis.call('XADD', KEYS[2], '*', 'key', ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'PENDING', 'ticket', ARGV[6], 'json', ARGV[2], 'id', id)
local reply = {redis.call('XLEN', KEYS[2])}
-- pcall: without the group (Redis restarted empty) the request waits on the stream until it is made
local read = redis.pcall('XREADGROUP', 'GROUP', ARGV[3], ARGV[4], 'COUNT', 1, 'STREAMS', KEYS[2], '>')
if read and not read.err then
  local message = read[1][2][1]
  local entry = ARGV[5] .. message[2][2]
  if redis.call('HGET', entry, 'state') == 'PENDING' then
    return taken(reply, message[1], entry)
  end
  redis.call('XACK', KEYS[2], ARGV[3], message[1])
  redis.call('XDEL', KEYS[2], message[1])
end
return reply
