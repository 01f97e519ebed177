--[[
  retryFailedTask: an operator's retry of a failed task: it leaves the failed list and goes back to the ready list
  (at the back of its priority) with its attempts counted from 0 again.

  KEYS[1] failed: list of {error, failedAt, task} JSON, newest first (capped, so the scan is bounded)
  KEYS[2] ready: list of task JSON, next to run at the head
  ARGV[1] id: the task's id

  Returns 1, or 0 when no failed task has that id (already retried, or dropped by the cap).
]]
--- @include lib/queue
local failed, ready = KEYS[1], KEYS[2]
local id = ARGV[1]
-- An entry is '{"error":<cjson string>,"failedAt":<ms>,"task":<task JSON>}' (lib/queue.lua failTask): the error is
-- encoded, so its quotes are escaped and the first ',"task":' is the task's.
for _, entry in ipairs(redis.call('LRANGE', failed, 0, -1)) do
  local task = string.sub(entry, string.find(entry, ',"task":', 1, true) + 8, -2)
  if string.match(task, '^{"priority":%-?%d+,"id":"([^"]*)"') == id then
    redis.call('LREM', failed, 1, entry)
    local fresh = string.gsub(task, '^({"priority":%-?%d+,"id":"[^"]*","name":"[^"]*","attempts":)%d+', '%10', 1)
    insertTask(ready, fresh, false)
    return 1
  end
end
return 0
