--[[
  takeTasks: moves up to `max` ready tasks, in order, to a worker's active list without waiting (a worker with
  several free slots fills them in one round trip; it blocks with BLMOVE only when this finds nothing). A busy
  worker's slots then take their next tasks as they settle (ackTask, retryTask), not here.

  KEYS[1] ready: list of task JSON, next to run at the head
  KEYS[2] active: list, the tasks the worker took and did not acknowledge
  ARGV[1] max: tasks taken at most

  Returns the tasks moved, first to run first.
]]
--- @include lib/take
return takeTasks(KEYS[1], KEYS[2], tonumber(ARGV[1]))
