--[[
  retryTask: takes a task off a worker's active list and puts it back as delayed, or files it as failed; up to
  `take` ready tasks take its place on the list in the same call (as in ackTask).

  KEYS[1] active: list, the tasks the worker took and did not acknowledge
  KEYS[2] delayed: sorted set, task JSON → when it is due (ms)
  KEYS[3] failed: list of {error, failedAt, task} JSON, newest first
  KEYS[4] ready: list of task JSON, next to run at the head
  ARGV[1] taken: the task as taken
  ARGV[2] returned: the task as it goes back (its attempts counted or not)
  ARGV[3] delayMs: when it runs again; -1: no attempt left, it is filed as failed
  ARGV[4] err: why it failed
  ARGV[5] failedCap: failed tasks kept
  ARGV[6] bell: the queue's sharded pub/sub channel, rung when the task is delayed
  ARGV[7] take: ready tasks taken at most in its place

  Returns {1, taken}, or {0, taken} when the task was no longer on the worker's list (returned to the queue when the
  worker was taken for dead): then it is not put back nor filed; taken: the tasks moved, first to run first.
]]
--- @include lib/now
--- @include lib/queue
--- @include lib/take
local active, delayed, failed, ready = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local taken, returned, delayMs, err, failedCap, bell, take =
  ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
local removed = redis.call('LREM', active, 1, taken)
if removed == 1 then
  local now = nowMs()
  if delayMs >= 0 then
    delayTask(delayed, bell, returned, now + delayMs)
  else
    failTask(failed, returned, err, now, failedCap)
  end
end
return { removed, takeTasks(ready, active, take) }
