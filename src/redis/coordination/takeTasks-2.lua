-- takeTasks: move up to `max` ready tasks, in order, to a worker's active list without waiting (a worker with
-- several free slots fills them in one round trip; it blocks with BLMOVE only when this finds nothing).
-- Returns the tasks moved, first to run first.
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
