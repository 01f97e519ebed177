-- schedule-cancel: the sender cancels a pending scheduled message; its task leaves the queue.
-- KEYS[1] record  KEYS[2] the sender's pending index for the chat  KEYS[3] their recently finished index
-- KEYS[4] queue ready  KEYS[5] queue delayed
-- ARGV[1] id  ARGV[2] the user cancelling  ARGV[3] retention (ms)  ARGV[4] most finished ones kept
-- Returns 1 cancelled; 0 too late (sending, sent, failed or cancelled already); -1 no such scheduled message;
-- -2 it is not the caller's. Only 1 writes.
--- @include lib/now
--- @include lib/schedule
local r = redis.call('HMGET', KEYS[1], 'status', 'sender', 'task')
if not r[1] then
  return -1
end
if r[2] ~= ARGV[2] then
  return -2
end
if r[1] ~= 'PENDING' then
  return 0
end
redis.call('HSET', KEYS[1], 'status', 'CANCELLED')
redis.call('ZREM', KEYS[5], r[3])
redis.call('LREM', KEYS[4], 1, r[3])
finishSchedule(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]))
return 1
