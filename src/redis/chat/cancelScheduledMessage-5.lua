--[[
  cancelScheduledMessage: the sender cancels a pending scheduled message; its task leaves the queue.
  Refuses a message that does not exist or is another user's; one already sending, sent, failed or cancelled is
  too late (nothing is written but for a cancel).

  KEYS[1] record: hash, the scheduled message (status, sender, task, ...)
  KEYS[2] pending: sorted set, the sender's pending scheduled messages in the chat, id → sendAt
  KEYS[3] done: sorted set, the sender's recently finished ones in the chat, id → finished at (ms)
  KEYS[4] ready: list, the scheduled queue's ready tasks
  KEYS[5] delayed: sorted set, the scheduled queue's delayed tasks, task JSON → due at (ms)
  ARGV[1] id: the scheduled message's id
  ARGV[2] user: the username cancelling
  ARGV[3] retentionMs: how long the record and the done index are kept once finished, in ms
  ARGV[4] doneKept: the most finished ones kept per sender and chat

  Returns 1 cancelled; 0 too late; STATUS.NOT_FOUND no such scheduled message; STATUS.NOT_OWNER it is not the
  caller's. Only 1 writes.
]]
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
