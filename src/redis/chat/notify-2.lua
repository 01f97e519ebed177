--[[
  notify: put a notification in a user's mailbox under the next id, keep at most `cap`, ring the doorbell.

  KEYS[1] inbox: sorted set, notification id → JSON {id, kind, text, data, createdAt}
  KEYS[2] inboxSeq: string counter, the last notification id
  ARGV[1] kind: the notification's kind
  ARGV[2] text: its text
  ARGV[3] data: JSON, or '' for none
  ARGV[4] cap: the most notifications kept
  ARGV[5] bell: the user's doorbell channel

  Returns the notification's id.
]]
--- @include lib/now
local inbox, inboxSeq = KEYS[1], KEYS[2]
local kind, text, data, cap, bell = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local id = redis.call('INCR', inboxSeq)
local notification = { id = id, kind = kind, text = text, createdAt = nowMs() }
if data ~= '' then
  notification.data = cjson.decode(data)
end
redis.call('ZADD', inbox, id, cjson.encode(notification))
redis.call('ZREMRANGEBYRANK', inbox, 0, -(cap + 1))
redis.call('SPUBLISH', bell, inboxSeq .. ' ' .. id)
return id
