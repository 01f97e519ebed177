-- schedule-finish: a claimed scheduled message is SENT (with its message id) or FAILED (with the reason).
-- KEYS[1] record  KEYS[2] the sender's pending index for the chat  KEYS[3] their recently finished index
-- ARGV[1] id  ARGV[2] status (SENT or FAILED)  ARGV[3] field (messageId or reason)  ARGV[4] its value
-- ARGV[5] retention (ms)  ARGV[6] most finished ones kept per sender and chat
-- Returns 1, or 0 when the message was not SENDING (finished already: nothing is written).
--- @include lib/now
--- @include lib/schedule
if redis.call('HGET', KEYS[1], 'status') ~= 'SENDING' then
  return 0
end
redis.call('HSET', KEYS[1], 'status', ARGV[2], ARGV[3], ARGV[4])
finishSchedule(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[5]), tonumber(ARGV[6]))
return 1
