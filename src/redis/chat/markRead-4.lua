-- markRead: move a member's read position forward (never backwards), then delete what everyone has read,
-- keeping the most recent `history` messages.
-- Returns the member's read position; STATUS.NOT_FOUND no such chat, STATUS.NOT_MEMBER.
--- @include lib/trim-read
local meta, seq, members, messages = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local member, upTo, history = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]) -- upTo is clamped to the last id
if redis.call('EXISTS', meta) == 0 then
  return STATUS.NOT_FOUND
end
local read = redis.call('ZSCORE', members, member)
if not read then
  return STATUS.NOT_MEMBER
end
read = tonumber(read)
local last = tonumber(redis.call('GET', seq))
local target = math.min(upTo, last)
if target <= read then
  return read
end
redis.call('ZADD', members, target, member)
trimRead(members, messages, last, history)
return target
