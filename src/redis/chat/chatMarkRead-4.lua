-- chat-mark-read: move a member's read position forward (never backwards), then delete what everyone has read,
-- keeping the most recent `history` messages.
-- KEYS[1] chat meta  KEYS[2] seq  KEYS[3] members  KEYS[4] messages
-- ARGV[1] member  ARGV[2] up to (clamped to the last id)  ARGV[3] history
-- Returns -1 no such chat, -2 not a member; else the member's read position.
--- @include lib/trim-read
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local read = redis.call('ZSCORE', KEYS[3], ARGV[1])
if not read then
  return -2
end
read = tonumber(read)
local last = tonumber(redis.call('GET', KEYS[2]))
local target = math.min(tonumber(ARGV[2]), last)
if target <= read then
  return read
end
redis.call('ZADD', KEYS[3], target, ARGV[1])
trimRead(KEYS[3], KEYS[4], last, tonumber(ARGV[3]))
return target
