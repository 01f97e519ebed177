-- queue-retry: take a task off a worker's active list and put it back as delayed, or file it as failed.
-- KEYS[1] the worker's active list  KEYS[2] delayed  KEYS[3] failed
-- ARGV[1] the task as taken  ARGV[2] the task as it goes back (attempts counted or not)  ARGV[3] delay (ms;
-- -1 = no attempt left: file it as failed)  ARGV[4] error message  ARGV[5] failed list cap
-- Returns 1, or 0 when the task was no longer on the worker's list (returned to the queue when the worker
-- was taken for dead): then nothing is written.
--- @include lib/now
--- @include lib/queue
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then
  return 0
end
local now = nowMs()
local delay = tonumber(ARGV[3])
if delay >= 0 then
  redis.call('ZADD', KEYS[2], now + delay, ARGV[2])
else
  failTask(KEYS[3], ARGV[2], ARGV[4], now, tonumber(ARGV[5]))
end
return 1
