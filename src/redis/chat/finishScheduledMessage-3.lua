-- finishScheduledMessage: a claimed scheduled message is SENT (with its message id) or FAILED (with the reason).
-- Returns 1, or 0 when the message was not SENDING (finished already: nothing is written).
--- @include lib/schedule
local record, pending, done = KEYS[1], KEYS[2], KEYS[3] -- the sender's pending and recently finished indexes
-- field: messageId (SENT) or reason (FAILED); doneKept: most finished ones kept per sender and chat
local id, status, field, value, retentionMs, doneKept = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
if redis.call('HGET', record, 'status') ~= 'SENDING' then
  return 0
end
redis.call('HSET', record, 'status', status, field, value)
finishSchedule(record, pending, done, id, retentionMs, doneKept)
return 1
