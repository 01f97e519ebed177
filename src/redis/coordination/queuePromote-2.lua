-- queue-promote: move delayed tasks that are due to the ready list, ahead of ordinary tasks of their priority
-- (in due order). One script, so pollers running at once never move a task twice.
-- KEYS[1] ready  KEYS[2] delayed
-- ARGV[1] most tasks to move
-- Returns {moved, ms until the next delayed task is due (-1: none left)}.
--- @include lib/now
--- @include lib/queue
local now = nowMs()
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
-- Each goes to the front of its priority, so the latest due goes first and the earliest ends up ahead.
for i = #due, 1, -1 do
  redis.call('ZREM', KEYS[2], due[i])
  insertTask(KEYS[1], due[i], true)
end
local nextDue = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #nextDue == 0 then
  return { #due, -1 }
end
return { #due, math.max(tonumber(nextDue[2]) - now, 0) }
