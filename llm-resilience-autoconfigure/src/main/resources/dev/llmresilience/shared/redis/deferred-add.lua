-- A pending deferred request joins the fleet's queue: its entry, and its ticket on the stream,
-- where the consumer group hands it to one replica. The replica that adds it takes the oldest
-- message nobody has taken yet, in the same step: with no backlog (the usual case) that is its
-- own request, which it then runs itself.
-- KEYS[1] the entry (hash: state, json), KEYS[2] the stream; ARGV[1] ticket, ARGV[2] the entry as
-- JSON, ARGV[3] group, ARGV[4] this replica, ARGV[5] entry key prefix
-- Returns {requests on the stream (the fleet's pending count), id, json} (id and json: the
-- request taken, if any). Adding a request Redis has already (this replica sends it again after a
-- lost reply) adds nothing.
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'state', 'PENDING', 'json', ARGV[2])
  redis.call('XADD', KEYS[2], '*', 'ticket', ARGV[1])
end
local reply = {redis.call('XLEN', KEYS[2])}
-- pcall: without the group (Redis restarted empty) the request waits on the stream until it is made
local read = redis.pcall('XREADGROUP', 'GROUP', ARGV[3], ARGV[4], 'COUNT', 1, 'STREAMS', KEYS[2], '>')
if read and not read.err then
  local message = read[1][2][1]
  local entry = ARGV[5] .. message[2][2]
  if redis.call('HGET', entry, 'state') == 'PENDING' then
    table.insert(reply, message[1])
    table.insert(reply, redis.call('HGET', entry, 'json'))
  else
    redis.call('XACK', KEYS[2], ARGV[3], message[1])
    redis.call('XDEL', KEYS[2], message[1])
  end
end
return reply
