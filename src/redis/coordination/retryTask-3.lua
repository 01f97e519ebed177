-- retryTask: take a task off a worker's active list and put it back as delayed, or file it as failed.
-- Returns 1, or 0 when the task was no longer on the worker's list (returned to the queue when the worker
-- was taken for dead): then nothing is written.
--- @include lib/now
--- @include lib/queue
local active, delayed, failed = KEYS[1], KEYS[2], KEYS[3]
-- taken: the task as taken; returned: as it goes back (attempts counted or not); delayMs -1: no attempt left
local taken, returned, delayMs, err, failedCap = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
if redis.call('LREM', active, 1, taken) == 0 then
  return 0
end
local now = nowMs()
if delayMs >= 0 then
  redis.call('ZADD', delayed, now + delayMs, returned)
else
  failTask(failed, returned, err, now, failedCap)
end
return 1
