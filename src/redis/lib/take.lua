-- A worker takes ready tasks: each moves, in order, from the head of the queue's ready list to the head of the
-- worker's active list, where it stays until acknowledged (or returned when the worker is taken for dead).

-- Moves up to `max` ready tasks to `active`; returns them, first to run first.
local function takeTasks(ready, active, max)
  local taken = {}
  for _ = 1, max do
    local task = redis.call('LMOVE', ready, active, 'LEFT', 'LEFT')
    if not task then
      break
    end
    taken[#taken + 1] = task
  end
  return taken
end
