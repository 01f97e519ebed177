-- enqueueTask: add a task, ready now or due after a delay.
-- Returns 1.
--- @include lib/now
--- @include lib/queue
local ready, delayed = KEYS[1], KEYS[2]
local task, delayMs = ARGV[1], tonumber(ARGV[2]) -- the task JSON; 0 = ready now
local now = nowMs()
enqueueTask(ready, delayed, task, now + delayMs, now)
return 1
