-- queue-take: move up to `max` ready tasks, in order, to a worker's active list without waiting (a worker with
-- several free slots fills them in one round trip; it blocks with BLMOVE only when this finds nothing).
-- KEYS[1] ready  KEYS[2] the worker's active list
-- ARGV[1] max
-- Returns the tasks moved, first to run first.
local taken = {}
for _ = 1, tonumber(ARGV[1]) do
  local task = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'LEFT')
  if not task then
    break
  end
  taken[#taken + 1] = task
end
return taken
