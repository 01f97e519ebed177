-- trimRead: delete the messages every member has read, keeping the most recent `history` ones, and always the last
-- (the chat's last activity is its time).
-- members: the chat's members key (member → read position); messages: its messages key; last: the last id.
local function trimRead(members, messages, last, history)
  local lowest = redis.call('ZRANGE', members, 0, 0, 'WITHSCORES')
  if #lowest == 0 then
    return
  end
  local cut = math.min(tonumber(lowest[2]), last - math.max(history, 1))
  if cut > 0 then
    redis.call('ZREMRANGEBYSCORE', messages, '-inf', cut)
  end
end
