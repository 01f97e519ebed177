-- notify: put a notification in a user's mailbox under the next id, keep at most `cap`, ring the doorbell.
-- Returns the notification's id.
--- @include lib/now
local inbox, inboxSeq = KEYS[1], KEYS[2]
local kind, text, data, cap, bell = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5] -- data: JSON, or ''
local id = redis.call('INCR', inboxSeq)
local notification = { id = id, kind = kind, text = text, createdAt = nowMs() }
if data ~= '' then
  notification.data = cjson.decode(data)
end
redis.call('ZADD', inbox, id, cjson.encode(notification))
redis.call('ZREMRANGEBYRANK', inbox, 0, -(cap + 1))
redis.call('SPUBLISH', bell, inboxSeq .. ' ' .. id)
return id
