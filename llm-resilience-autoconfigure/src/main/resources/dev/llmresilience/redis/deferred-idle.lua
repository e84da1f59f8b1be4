-- The messages the group holds for this replica that nobody has handed to it for a while, a page of
-- them: those it runs or waits on (a backoff longer than that), and any that a poll, an add or a
-- takeover handed to it in a reply it lost (a command timeout, a dropped connection), which it then
-- never heard of. The replica tells them apart by what it holds.
-- KEYS[1] the stream; ARGV[1] group, ARGV[2] this replica, ARGV[3] idle for at least (ms), ARGV[4] the
-- id the page starts after ('-' for the first page), ARGV[5] how many
-- Returns the ids, oldest first; none without the group (it is made again at a heartbeat).
local start = (ARGV[4] == '-') and '-' or ('(' .. ARGV[4])
local pending = redis.pcall('XPENDING', KEYS[1], ARGV[1], 'IDLE', tonumber(ARGV[3]), start, '+',
    tonumber(ARGV[5]), ARGV[2])
local ids = {}
if type(pending) ~= 'table' or pending.err then
  return ids
end
for _, message in ipairs(pending) do
  table.insert(ids, message[1])
end
return ids
