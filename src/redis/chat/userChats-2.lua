-- user-chats: add a chat to, or remove it from, a user's index of memberships; ring the user's doorbell.
-- KEYS[1] user chats  KEYS[2] user chats version
-- ARGV[1] 'add' or 'remove'  ARGV[2] chat id  ARGV[3] doorbell channel
-- Returns 1 when the index changed, 0 otherwise.
--- @include lib/now
local changed
if ARGV[1] == 'add' then
  changed = redis.call('ZADD', KEYS[1], 'NX', nowMs(), ARGV[2])
else
  changed = redis.call('ZREM', KEYS[1], ARGV[2])
end
if changed == 1 then
  redis.call('SPUBLISH', ARGV[3], KEYS[2] .. ' ' .. redis.call('INCR', KEYS[2]))
end
return changed
