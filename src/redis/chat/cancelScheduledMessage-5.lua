-- cancelScheduledMessage: the sender cancels a pending scheduled message; its task leaves the queue.
-- Returns 1 cancelled; 0 too late (sending, sent, failed or cancelled already); STATUS.NOT_FOUND no such
-- scheduled message; STATUS.NOT_OWNER it is not the caller's. Only 1 writes.
--- @include lib/schedule
local record, pending, done, ready, delayed = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, user, retentionMs, doneKept = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local r = redis.call('HMGET', record, 'status', 'sender', 'task')
if not r[1] then
  return STATUS.NOT_FOUND
end
if r[2] ~= user then
  return STATUS.NOT_OWNER
end
if r[1] ~= 'PENDING' then
  return 0
end
redis.call('HSET', record, 'status', 'CANCELLED')
redis.call('ZREM', delayed, r[3])
redis.call('LREM', ready, 1, r[3])
finishSchedule(record, pending, done, id, retentionMs, doneKept)
return 1
