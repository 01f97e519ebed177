-- queue-requeue: return every task on a worker's active list to the front of its priority in the ready list, and
-- forget the worker. For a worker taken for dead, each return counts as an attempt (a task that keeps killing
-- its workers ends up failed); for a worker that is stopping, it does not.
-- KEYS[1] the worker's active list  KEYS[2] ready  KEYS[3] workers  KEYS[4] failed
-- ARGV[1] worker id  ARGV[2] timeout (ms): only if its last heartbeat is older (-1: the worker itself is
-- stopping)  ARGV[3] failed list cap
-- Returns the number of tasks returned, or -1 when the worker has heartbeated since (nothing is written).
--- @include lib/now
--- @include lib/queue
local now = nowMs()
local dead = tonumber(ARGV[2]) >= 0
if dead then
  local last = redis.call('ZSCORE', KEYS[3], ARGV[1])
  if last and tonumber(last) >= now - tonumber(ARGV[2]) then
    return -1
  end
end
local tasks = redis.call('LRANGE', KEYS[1], 0, -1)
-- The list's head is the task taken last, and each goes to the front of its priority: going from the head
-- leaves them in the order they were taken in.
local returned = 0
for i = 1, #tasks do
  local task, spent = tasks[i], false
  if dead then
    task, spent = countAttempt(task)
  end
  if spent then
    failTask(KEYS[4], task, 'its worker stopped heartbeating', now, tonumber(ARGV[3]))
  else
    insertTask(KEYS[2], task, true)
    returned = returned + 1
  end
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return returned
