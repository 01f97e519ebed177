--[[
  gapDelivered: after a gap notification was delivered, remove its outbox entry, unless it grew meanwhile (sends
  dropped more while it was being delivered): then the entry keeps only what was not delivered, from `to` + 1,
  claimed for `claimMs` by the caller, who delivers that next (so no id is notified twice, and none waits for a
  later send). An entry that starts elsewhere is not the caller's (its claim ran out and another send took it): it
  is left alone.

  KEYS[1] gaps: hash, the chat's gap outbox, member → "from:to:claimedUntil"
  ARGV[1] member: the username the gap was delivered to
  ARGV[2] from: the first message id of the gap as delivered
  ARGV[3] to: the last message id of the gap as delivered
  ARGV[4] claimMs: how long the rest of a grown entry stays claimed, in ms

  Returns {from, to}, the rest of the gap the caller now delivers, or {} when there is none for the caller.
]]
--- @include lib/now
local gaps = KEYS[1]
local member, from, to, claimMs = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local entry = redis.call('HGET', gaps, member)
if not entry then
  return {}
end
local entryFrom, entryTo = string.match(entry, '^(%d+):(%d+):')
if entryFrom ~= from then
  return {}
end
entryTo = tonumber(entryTo)
if entryTo <= to then
  redis.call('HDEL', gaps, member)
  return {}
end
redis.call('HSET', gaps, member, (to + 1) .. ':' .. entryTo .. ':' .. (nowMs() + claimMs))
return { to + 1, entryTo }
