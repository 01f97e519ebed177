--[[
  takeTasks: moves up to `max` ready tasks, in order, to a worker's active list without waiting (a worker with
  several free slots fills them in one round trip; it blocks with BLMOVE only when this finds nothing).

  KEYS[1] ready: list of task JSON, next to run at the head
  KEYS[2] active: list, the tasks the worker took and did not acknowledge
  ARGV[1] max: tasks taken at most

  Returns the tasks moved, first to run first.
]]
local ready, active = KEYS[1], KEYS[2]
local max = tonumber(ARGV[1])
local taken = {}
for _ = 1, max do
  local task = redis.call('LMOVE', ready, active, 'LEFT', 'LEFT')
  if not task then
    break
  end
  taken[#taken + 1] = task
end
return taken
