-- A pending deferred request joins the fleet's queue: its entry, and its ticket on the stream,
-- where the consumer group hands it to one replica.
-- KEYS[1] the entry (hash: state, json), KEYS[2] the stream; ARGV[1] ticket, ARGV[2] the entry as JSON
-- Returns the requests on the stream (the fleet's pending count)
redis.call('HSET', KEYS[1], 'state', 'PENDING', 'json', ARGV[2])
redis.call('PERSIST', KEYS[1])
redis.call('XADD', KEYS[2], '*', 'ticket', ARGV[1])
return redis.call('XLEN', KEYS[2])
