-- schedule-create: record a scheduled message and enqueue the task that sends it, in one step.
-- KEYS[1] record  KEYS[2] the sender's pending index for the chat  KEYS[3] queue ready  KEYS[4] queue delayed
-- ARGV[1] id  ARGV[2] chat id  ARGV[3] sender  ARGV[4] text  ARGV[5] sendAt (ms; in the past: now)  ARGV[6] task JSON
-- ARGV[7] most pending scheduled messages per sender and chat
-- Returns 1, or 0 when the sender already has that many pending in the chat (nothing is written).
--- @include lib/now
--- @include lib/queue
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[7]) then
  return 0
end
local now = nowMs()
local sendAt = math.max(tonumber(ARGV[5]), now) -- in the past means now
redis.call('HSET', KEYS[1], 'chatId', ARGV[2], 'sender', ARGV[3], 'text', ARGV[4], 'sendAt', sendAt,
  'createdAt', now, 'status', 'PENDING', 'task', ARGV[6])
redis.call('ZADD', KEYS[2], sendAt, ARGV[1])
enqueueTask(KEYS[3], KEYS[4], ARGV[6], sendAt, now)
return 1
