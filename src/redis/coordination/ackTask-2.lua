--[[
  ackTask: a task is done: it leaves the worker's active list, and up to `take` ready tasks take its place there in
  the same call (a busy worker makes one round trip per task; a stopping one passes 0 and takes nothing).

  KEYS[1] active: list, the tasks the worker took and did not acknowledge
  KEYS[2] ready: list of task JSON, next to run at the head
  ARGV[1] task: the task as taken
  ARGV[2] take: ready tasks taken at most in its place

  Returns {1, taken}, or {0, taken} when the task was no longer on the worker's list (returned to the queue when the
  worker was taken for dead); taken: the tasks moved, first to run first.
]]
--- @include lib/take
local active, ready = KEYS[1], KEYS[2]
local task, take = ARGV[1], tonumber(ARGV[2])
local acked = redis.call('LREM', active, 1, task)
return { acked, takeTasks(ready, active, take) }
