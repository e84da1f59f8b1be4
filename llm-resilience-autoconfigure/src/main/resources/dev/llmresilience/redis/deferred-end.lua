-- A deferred request ended on this replica: it counts only if no replica ended it first, so that
-- each request completes once.
-- KEYS[1] the entry, KEYS[2] the stream; ARGV[1] COMPLETED or FAILED, ARGV[2] the entry as JSON,
-- ARGV[3] retention (ms), ARGV[4] the group, ARGV[5] its id on the stream ('' for none), ARGV[6] replica,
-- ARGV[7] why it failed ('' for none), ARGV[8] how long the replica whose end counted has to publish
-- its event (ms, by Redis's clock: the replica timeout); an empty ARGV[2] drops the JSON (an entry
-- that could not be read)
-- Returns 1 if this end counts (also when this replica's own end is sent again after a lost
-- reply, while its event is still due), 0 if another replica ended the request first, 2 if this
-- end counted and its event is out already: the reply was lost, the replica taken for gone, and the
-- one that took its message over published the event; 3 if another replica ended the request first
-- and its event is still due on the message this replica holds (that replica was taken for gone
-- while it still ran the request, and ended it), ARGV[8] or more after that end: that replica did
-- not publish it in time (it died), so the message stays, and this replica publishes the event,
-- from the stored entry, and then lets the message go (deferred-evented.lua); 4 if so but sooner:
-- the event is still that replica's to publish, the message stays, and this replica sends its end
-- again at its next heartbeat (0 once the event is out, 3 once the time has passed without it).
-- The message of an end that counts stays pending, and the hash's 'event' names it, until the
-- replica has published the request's event (deferred-evented.lua): if the replica dies first,
-- the replica that takes its messages over publishes it (deferred-reclaim.lua).
local function drop()
  if ARGV[5] ~= '' then
    redis.call('XACK', KEYS[2], ARGV[4], ARGV[5])
    redis.call('XDEL', KEYS[2], ARGV[5])
  end
end
local function now()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local state = redis.call('HGET', KEYS[1], 'state')
if state and state ~= 'PENDING' then
  if redis.call('HGET', KEYS[1], 'by') == ARGV[6] then
    if ARGV[5] == '' or ARGV[2] == '' or redis.call('HGET', KEYS[1], 'event') == ARGV[5] then
      return 1
    end
    return 2
  end
  if ARGV[5] ~= '' and redis.call('HGET', KEYS[1], 'event') == ARGV[5] then
    local ended = tonumber(redis.call('HGET', KEYS[1], 'ended') or '0')
    if now() - ended < tonumber(ARGV[8]) then
      return 4
    end
    return 3
  end
  drop()
  return 0
end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'json', ARGV[2], 'by', ARGV[6], 'reason', ARGV[7], 'ended', now())
if ARGV[2] == '' then
  -- nothing to publish an event from but the reason: this replica publishes it now, once
  redis.call('HDEL', KEYS[1], 'json')
  drop()
elseif ARGV[5] ~= '' then
  redis.call('HSET', KEYS[1], 'event', ARGV[5])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
