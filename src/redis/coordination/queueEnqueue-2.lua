-- queue-enqueue: add a task, ready now or due after a delay.
-- KEYS[1] ready  KEYS[2] delayed
-- ARGV[1] task JSON  ARGV[2] delay (ms; 0 = ready now)
-- Returns 1.
--- @include lib/now
--- @include lib/queue
local now = nowMs()
enqueueTask(KEYS[1], KEYS[2], ARGV[1], now + tonumber(ARGV[2]), now)
return 1
