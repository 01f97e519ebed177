--[[
  scheduleMessage: record a scheduled message and enqueue the task that sends it, in one step. Refuses a sender
  who already has `pendingMax` pending in the chat.

  KEYS[1] record: hash, the scheduled message (chatId, sender, text, sendAt, createdAt, status, task)
  KEYS[2] pending: sorted set, the sender's pending scheduled messages in the chat, id → sendAt
  KEYS[3] ready: list, the scheduled queue's ready tasks
  KEYS[4] delayed: sorted set, the scheduled queue's delayed tasks, task JSON → due at (ms)
  ARGV[1] id: the scheduled message's id
  ARGV[2] chatId: the chat it goes to
  ARGV[3] sender: the sender's username
  ARGV[4] text: the message's text
  ARGV[5] sendAt: when to send it, ms (in the past means now)
  ARGV[6] task: the task JSON that sends it
  ARGV[7] pendingMax: the most pending scheduled messages per sender and chat
  ARGV[8] bell: the scheduled queue's sharded pub/sub channel, rung when the task is delayed

  Returns 1, or 0 when the sender already has `pendingMax` pending in the chat (nothing is written).
]]
--- @include lib/now
--- @include lib/queue
local record, pending, ready, delayed = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, chatId, sender, text, sendAt, task, pendingMax, bell =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7]), ARGV[8]
if redis.call('ZCARD', pending) >= pendingMax then
  return 0
end
local now = nowMs()
sendAt = math.max(sendAt, now) -- in the past means now
redis.call('HSET', record, 'chatId', chatId, 'sender', sender, 'text', text, 'sendAt', sendAt,
  'createdAt', now, 'status', 'PENDING', 'task', task)
redis.call('ZADD', pending, sendAt, id)
enqueueTask(ready, delayed, task, sendAt, now, bell)
return 1
