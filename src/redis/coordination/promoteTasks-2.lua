--[[
  promoteTasks: moves delayed tasks that are due to the ready list, ahead of ordinary tasks of their priority (in
  due order). One script, so pollers running at once never move a task twice.

  KEYS[1] ready: list of task JSON, next to run at the head
  KEYS[2] delayed: sorted set, task JSON → when it is due (ms)
  ARGV[1] max: due tasks moved at most

  Returns {moved, ms until the next delayed task is due (-1: none left), Redis's clock (ms) as it ran}: due times
  and doorbell rings are on Redis's clock, so a worker needs it to compare a ring with its wake-up.
]]
--- @include lib/now
--- @include lib/queue
local ready, delayed = KEYS[1], KEYS[2]
local max = tonumber(ARGV[1])
local now = nowMs()
local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, max)
-- Each goes to the front of its priority, so the latest due goes first and the earliest ends up ahead.
for i = #due, 1, -1 do
  redis.call('ZREM', delayed, due[i])
  insertTask(ready, due[i], true)
end
local nextDue = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
if #nextDue == 0 then
  return { #due, -1, now }
end
return { #due, math.max(tonumber(nextDue[2]) - now, 0), now }
