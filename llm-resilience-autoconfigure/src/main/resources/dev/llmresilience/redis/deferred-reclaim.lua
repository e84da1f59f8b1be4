-- Take over the requests of replicas that are gone: not heard from for ARGV[3] ms, or never heard
-- from. Atomic, so that two replicas never take over the same request.
-- KEYS[1] the stream, KEYS[2] the replicas (sorted set of last heartbeats)
-- ARGV[1] group, ARGV[2] this replica, ARGV[3] how long a replica may go unheard (ms, by Redis's clock),
-- ARGV[4] how many per replica, ARGV[5] entry key prefix
-- Returns {id, digest, ticket, json, ...} of the requests taken over: pending ones, and ended ones
-- whose replica died before it published their event (the hash's 'event' names the message; the
-- JSON then holds the ended entry).
local time = redis.call('TIME')
local gone = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) - tonumber(ARGV[3])
local taken = {}
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local name, pending
  for i = 1, #consumer, 2 do
    if consumer[i] == 'name' then name = consumer[i + 1] end
    if consumer[i] == 'pending' then pending = tonumber(consumer[i + 1]) end
  end
  local seen = redis.call('ZSCORE', KEYS[2], name)
  if name ~= ARGV[2] and ((not seen) or tonumber(seen) < gone) then
    if pending > 0 then
      local ids = {}
      for _, message in ipairs(redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', tonumber(ARGV[4]), name)) do
        table.insert(ids, message[1])
      end
      for _, message in ipairs(redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, unpack(ids))) do
        local entry = message and (ARGV[5] .. message[2][2])
        if not entry then
          -- deleted from the stream while pending: nothing to take over
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
    end
    if pending <= tonumber(ARGV[4]) then
      redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
      redis.call('ZREM', KEYS[2], name)
    end
  end
end
return taken
