--[[
  requeueTasks: returns every task on a worker's active list to the front of its priority in the ready list, and
  forgets the worker. For a worker taken for dead, each return counts as an attempt (a task that keeps killing its
  workers ends up failed); for a worker that is stopping, it does not.

  KEYS[1] active: list, the tasks the worker took and did not acknowledge
  KEYS[2] ready: list of task JSON, next to run at the head
  KEYS[3] workers: sorted set, worker id → last heartbeat (ms)
  KEYS[4] failed: list of {error, failedAt, task} JSON, newest first
  ARGV[1] workerId: the worker
  ARGV[2] timeoutMs: only if its last heartbeat is older than this (-1: the worker itself is stopping)
  ARGV[3] failedCap: failed tasks kept

  Returns the number of tasks returned, or STATUS.ALIVE when the worker has heartbeated since (nothing is written).
]]
--- @include lib/now
--- @include lib/queue
local active, ready, workers, failed = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local workerId, timeoutMs, failedCap = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = nowMs()
local dead = timeoutMs >= 0
if dead then
  local last = redis.call('ZSCORE', workers, workerId)
  if last and tonumber(last) >= now - timeoutMs then
    return STATUS.ALIVE
  end
end
local tasks = redis.call('LRANGE', active, 0, -1)
-- The list's head is the task taken last, and each goes to the front of its priority: going from the head
-- leaves them in the order they were taken in.
local returned = 0
for i = 1, #tasks do
  local task, spent = tasks[i], false
  if dead then
    task, spent = countAttempt(task)
  end
  if spent then
    failTask(failed, task, 'its worker stopped heartbeating', now, failedCap)
  else
    insertTask(ready, task, true)
    returned = returned + 1
  end
end
redis.call('DEL', active)
redis.call('ZREM', workers, workerId)
return returned
