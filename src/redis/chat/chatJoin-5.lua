-- chat-join: add a member to a chat at the chat's current last message id (also when there is none yet).
-- KEYS[1] chat meta  KEYS[2] seq  KEYS[3] version  KEYS[4] members  KEYS[5] names
-- ARGV[1] user to add  ARGV[2] added by ('' when the user joins a public chat)  ARGV[3] doorbell channel
-- ARGV[4] maximum member count
-- Returns {-1} no such chat, {-2} adder not a member, {-3} chat not public, {-4} chat full (nothing written);
-- {0, last} when already a member, {1, last} when added.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return { -1 }
end
if ARGV[2] ~= '' then
  if not redis.call('ZSCORE', KEYS[4], ARGV[2]) then
    return { -2 }
  end
elseif redis.call('HGET', KEYS[1], 'public') ~= '1' then
  return { -3 }
end
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if redis.call('ZSCORE', KEYS[4], ARGV[1]) then
  return { 0, last }
end
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[4]) then
  return { -4 }
end
redis.call('ZADD', KEYS[4], last, ARGV[1])
redis.call('ZADD', KEYS[5], 0, ARGV[1])
redis.call('SPUBLISH', ARGV[3], KEYS[3] .. ' ' .. redis.call('INCR', KEYS[3]))
return { 1, last }
