-- chat-leave: remove a member; the last member leaving deletes the chat, its messages and counters.
-- KEYS[1] chat meta  KEYS[2] seq  KEYS[3] version  KEYS[4] members  KEYS[5] names  KEYS[6] messages  KEYS[7] gaps
-- KEYS[8] scheduled  KEYS[9] scheduled times (the memo of sent scheduled messages)
-- ARGV[1] member  ARGV[2] history  ARGV[3] doorbell channel  ARGV[4] removed by ('' when leaving)
-- Returns -1 no such chat, -2 not a member (the leaver, or the remover), -3 the remover is not the chat's
-- creator, -4 the member to remove is not a member (nothing written); 1 left, 2 left and the chat was deleted.
--- @include lib/trim-read
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
if ARGV[4] ~= '' then
  if not redis.call('ZSCORE', KEYS[4], ARGV[4]) then
    return -2
  end
  if redis.call('HGET', KEYS[1], 'createdBy') ~= ARGV[4] then
    return -3
  end
end
if redis.call('ZREM', KEYS[4], ARGV[1]) == 0 then
  return (ARGV[4] ~= '') and -4 or -2
end
redis.call('ZREM', KEYS[5], ARGV[1])
redis.call('HDEL', KEYS[7], ARGV[1])
local status = 1
if redis.call('ZCARD', KEYS[4]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9])
  status = 2
else
  trimRead(KEYS[4], KEYS[6], tonumber(redis.call('GET', KEYS[2])), tonumber(ARGV[2]))
  redis.call('SPUBLISH', ARGV[3], KEYS[3] .. ' ' .. redis.call('INCR', KEYS[3]))
  return status
end
redis.call('SPUBLISH', ARGV[3], KEYS[3]) -- deleted: no version to announce
return status
