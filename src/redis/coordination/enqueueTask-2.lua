--[[
  enqueueTask: adds a task, ready now or due after a delay.

  KEYS[1] ready: list of task JSON, next to run at the head
  KEYS[2] delayed: sorted set, task JSON → when it is due (ms)
  ARGV[1] task: the task JSON
  ARGV[2] delayMs: 0 = ready now
  ARGV[3] bell: the queue's sharded pub/sub channel, rung when the task is delayed

  Returns 1.
]]
--- @include lib/now
--- @include lib/queue
local ready, delayed = KEYS[1], KEYS[2]
local task, delayMs, bell = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local now = nowMs()
enqueueTask(ready, delayed, task, now + delayMs, now, bell)
return 1
