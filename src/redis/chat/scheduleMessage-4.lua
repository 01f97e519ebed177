-- scheduleMessage: record a scheduled message and enqueue the task that sends it, in one step.
-- Returns 1, or 0 when the sender already has `pendingMax` pending in the chat (nothing is written).
--- @include lib/now
--- @include lib/queue
local record, pending, ready, delayed = KEYS[1], KEYS[2], KEYS[3], KEYS[4] -- pending: the sender's, in the chat
local id, chatId, sender, text, sendAt, task, pendingMax =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
if redis.call('ZCARD', pending) >= pendingMax then
  return 0
end
local now = nowMs()
sendAt = math.max(sendAt, now) -- in the past means now
redis.call('HSET', record, 'chatId', chatId, 'sender', sender, 'text', text, 'sendAt', sendAt,
  'createdAt', now, 'status', 'PENDING', 'task', task)
redis.call('ZADD', pending, sendAt, id)
enqueueTask(ready, delayed, task, sendAt, now)
return 1
