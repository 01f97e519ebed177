--[[
  finishScheduledMessage: a claimed scheduled message is SENT (with its message id) or FAILED (with the reason).
  Refuses a message that is not SENDING (finished already).

  KEYS[1] record: hash, the scheduled message
  KEYS[2] pending: sorted set, the sender's pending scheduled messages in the chat, id → sendAt
  KEYS[3] done: sorted set, the sender's recently finished ones in the chat, id → finished at (ms)
  ARGV[1] id: the scheduled message's id
  ARGV[2] status: SENT or FAILED
  ARGV[3] field: messageId (SENT) or reason (FAILED)
  ARGV[4] value: the message id, or the reason
  ARGV[5] retentionMs: how long the record and the done index are kept, in ms
  ARGV[6] doneKept: the most finished ones kept per sender and chat

  Returns 1, or 0 when the message was not SENDING (nothing is written).
]]
--- @include lib/schedule
local record, pending, done = KEYS[1], KEYS[2], KEYS[3]
local id, status, field, value, retentionMs, doneKept =
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
if redis.call('HGET', record, 'status') ~= 'SENDING' then
  return 0
end
redis.call('HSET', record, 'status', status, field, value)
finishSchedule(record, pending, done, id, retentionMs, doneKept)
return 1
