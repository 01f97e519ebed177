--[[
  leaveChat: remove a member (leaving, or removed by the chat's creator); the last member leaving deletes the
  chat, its messages and counters. Refuses a chat that does not exist, a leaver who is not a member, a remover
  who is not a member or not the creator, and a member to remove who is not one.

  KEYS[1] meta: hash, the chat's public (0/1), createdAt, createdBy
  KEYS[2] seq: string counter, the chat's last message id
  KEYS[3] version: string counter, the chat's version, bumped by the leave
  KEYS[4] members: sorted set, member → read position
  KEYS[5] names: sorted set, every score 0: member names
  KEYS[6] messages: sorted set, message id → message JSON
  KEYS[7] gaps: hash, the gap outbox, member → "from:to:claimedUntil"
  KEYS[8] scheduled: hash, the memo of sent scheduled messages, scheduled message id → message id
  KEYS[9] scheduledAt: sorted set, the memo's times, scheduled message id → ms sent
  ARGV[1] member: the username leaving, or removed
  ARGV[2] history: how many of the most recent messages are kept even when everyone has read them
  ARGV[3] bell: the chat's doorbell channel
  ARGV[4] by: the creator removing the member, '' when leaving

  Returns 1 left, 2 left and the chat was deleted; else STATUS.NOT_FOUND no such chat, STATUS.NOT_MEMBER (the
  leaver, or the remover), STATUS.NOT_CREATOR, STATUS.NO_SUCH_MEMBER the member to remove (nothing is written).
]]
--- @include lib/trim-read
local meta, seq, version, members, names, messages, gaps = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local scheduled, scheduledAt = KEYS[8], KEYS[9]
local member, history, bell, by = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
if redis.call('EXISTS', meta) == 0 then
  return STATUS.NOT_FOUND
end
if by ~= '' then
  if not redis.call('ZSCORE', members, by) then
    return STATUS.NOT_MEMBER
  end
  if redis.call('HGET', meta, 'createdBy') ~= by then
    return STATUS.NOT_CREATOR
  end
end
if redis.call('ZREM', members, member) == 0 then
  return (by ~= '') and STATUS.NO_SUCH_MEMBER or STATUS.NOT_MEMBER
end
redis.call('ZREM', names, member)
redis.call('HDEL', gaps, member)
if redis.call('ZCARD', members) == 0 then
  redis.call('DEL', meta, seq, version, names, messages, gaps, scheduled, scheduledAt)
  redis.call('SPUBLISH', bell, version) -- deleted: no version to announce
  return 2
end
trimRead(members, messages, tonumber(redis.call('GET', seq)), history)
redis.call('SPUBLISH', bell, version .. ' ' .. redis.call('INCR', version))
return 1
