--[[
  retryTask: takes a task off a worker's active list and puts it back as delayed, or files it as failed.

  KEYS[1] active: list, the tasks the worker took and did not acknowledge
  KEYS[2] delayed: sorted set, task JSON → when it is due (ms)
  KEYS[3] failed: list of {error, failedAt, task} JSON, newest first
  ARGV[1] taken: the task as taken
  ARGV[2] returned: the task as it goes back (its attempts counted or not)
  ARGV[3] delayMs: when it runs again; -1: no attempt left, it is filed as failed
  ARGV[4] err: why it failed
  ARGV[5] failedCap: failed tasks kept
  ARGV[6] bell: the queue's sharded pub/sub channel, rung when the task is delayed

  Returns 1, or 0 when the task was no longer on the worker's list (returned to the queue when the worker was taken
  for dead): then nothing is written.
]]
--- @include lib/now
--- @include lib/queue
local active, delayed, failed = KEYS[1], KEYS[2], KEYS[3]
local taken, returned, delayMs, err, failedCap, bell =
  ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]), ARGV[6]
if redis.call('LREM', active, 1, taken) == 0 then
  return 0
end
local now = nowMs()
if delayMs >= 0 then
  delayTask(delayed, bell, returned, now + delayMs)
else
  failTask(failed, returned, err, now, failedCap)
end
return 1
