-- leaveChat: remove a member (leaving, or removed by the chat's creator); the last member leaving deletes the
-- chat, its messages and counters.
-- Returns 1 left, 2 left and the chat was deleted; else STATUS.NOT_FOUND no such chat, STATUS.NOT_MEMBER (the
-- leaver, or the remover), STATUS.NOT_CREATOR, STATUS.NO_SUCH_MEMBER the member to remove (nothing is written).
--- @include lib/trim-read
local meta, seq, version, members, names, messages, gaps = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local scheduled, scheduledAt = KEYS[8], KEYS[9] -- the memo of sent scheduled messages
local member, history, bell, by = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4] -- by: '' when leaving
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
