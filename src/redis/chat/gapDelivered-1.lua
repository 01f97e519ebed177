--[[
  gapDelivered: after a gap notification was delivered, remove its outbox entry unless it grew meanwhile (an
  entry that grew since it was claimed is released, claim 0, so the next send delivers the larger gap).

  KEYS[1] gaps: hash, the chat's gap outbox, member → "from:to:claimedUntil"
  ARGV[1] member: the username the gap was delivered to
  ARGV[2] from: the first message id of the gap as delivered
  ARGV[3] to: the last message id of the gap as delivered

  Returns 1 when removed, 0 otherwise.
]]
local gaps = KEYS[1]
local member, from, to = ARGV[1], ARGV[2], ARGV[3]
local entry = redis.call('HGET', gaps, member)
if not entry then
  return 0
end
local entryFrom, entryTo = string.match(entry, '^(%d+):(%d+):')
if entryFrom == from and entryTo == to then
  redis.call('HDEL', gaps, member)
  return 1
end
redis.call('HSET', gaps, member, entryFrom .. ':' .. entryTo .. ':0')
return 0
