-- notify: put a notification in a user's mailbox under the next id, keep at most `cap`, ring the doorbell.
-- KEYS[1] user inbox  KEYS[2] user inbox seq
-- ARGV[1] kind  ARGV[2] text  ARGV[3] data (JSON, or '' for none)  ARGV[4] cap  ARGV[5] doorbell channel
-- Returns the notification's id.
--- @include lib/now
local id = redis.call('INCR', KEYS[2])
local notification = { id = id, kind = ARGV[1], text = ARGV[2], createdAt = nowMs() }
if ARGV[3] ~= '' then
  notification.data = cjson.decode(ARGV[3])
end
redis.call('ZADD', KEYS[1], id, cjson.encode(notification))
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[4]) + 1))
redis.call('SPUBLISH', ARGV[5], KEYS[2] .. ' ' .. id)
return id
