--[[
  claimScheduledMessage: the worker about to send a scheduled message marks it SENDING, after which it can no
  longer be cancelled. A message already SENDING (its worker died mid-send) is claimed again.

  KEYS[1] record: hash, the scheduled message (status, chatId, sender, text, ...)

  Returns {status, chatId, sender, text}: status SENDING when the caller is to send it; anything else
  (SENT, CANCELLED, FAILED) means there is nothing to do; {} when there is no such record.
]]
local record = KEYS[1]
local r = redis.call('HMGET', record, 'status', 'chatId', 'sender', 'text')
if not r[1] then
  return {}
end
if r[1] == 'PENDING' then
  redis.call('HSET', record, 'status', 'SENDING')
  r[1] = 'SENDING'
end
return r
