--[[
  indexChat: add a chat to, or remove it from, a user's index of memberships; ring the user's doorbell when the
  index changed. Refuses an add of a chat not in the index when it holds its most chats: the index is written before
  the chat (and undone when the chat refuses), so this refusal keeps the user out of the chat too.

  KEYS[1] chats: sorted set, the user's chats, chat id → ms joined
  KEYS[2] chatsVersion: string counter, bumped when the index changes
  ARGV[1] op: 'add' or 'remove'
  ARGV[2] chatId: the chat's id
  ARGV[3] bell: the user's doorbell channel
  ARGV[4] maxChats: the most chats an add leaves in the index (a remove ignores it)

  Returns 1 when the index changed, 0 otherwise; STATUS.TOO_MANY_CHATS for an add past maxChats (nothing is written).
]]
--- @include lib/now
local chats, chatsVersion = KEYS[1], KEYS[2]
local op, chatId, bell, maxChats = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local changed
if op == 'add' then
  if redis.call('ZCARD', chats) >= maxChats and not redis.call('ZSCORE', chats, chatId) then
    return STATUS.TOO_MANY_CHATS
  end
  changed = redis.call('ZADD', chats, 'NX', nowMs(), chatId)
else
  changed = redis.call('ZREM', chats, chatId)
end
if changed == 1 then
  redis.call('SPUBLISH', bell, chatsVersion .. ' ' .. redis.call('INCR', chatsVersion))
end
return changed
