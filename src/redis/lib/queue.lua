-- Task queues. A task is JSON that starts with a fixed header written by src/services/coordination/queues.ts:
--   {"priority":P,"id":"ID","name":"NAME","attempts":A,"maxAttempts":M,...}
-- so scripts read the priority and count attempts without decoding (or re-ordering) the rest.
-- The ready list runs from its head: higher priorities first, first in first out within one priority.
local TASK_HEADER = '^{"priority":(%-?%d+),"id":"[^"]*","name":"[^"]*","attempts":(%d+),"maxAttempts":(%d+),'

local function taskPriority(task)
  return tonumber((string.match(task, TASK_HEADER))) -- the first capture only
end

-- Puts a task in the ready list at the back of its priority (`front` false) or at the front (`front` true:
-- due delayed tasks and returned tasks go ahead of ordinary ones of the same priority). Ready lists are sorted
-- by priority, so the place is found by binary search; the common cases (one priority) are one push.
local function insertTask(ready, task, front)
  local p = taskPriority(task)
  local function goesBefore(i)
    local q = taskPriority(redis.call('LINDEX', ready, i))
    if front then
      return q <= p
    end
    return q < p
  end
  local n = redis.call('LLEN', ready)
  if n == 0 or not goesBefore(n - 1) then
    redis.call('RPUSH', ready, task)
    return
  end
  if goesBefore(0) then
    redis.call('LPUSH', ready, task)
    return
  end
  local lo, hi = 0, n - 1 -- goesBefore(lo) is false, goesBefore(hi) is true
  while hi - lo > 1 do
    local mid = math.floor((lo + hi) / 2)
    if goesBefore(mid) then
      hi = mid
    else
      lo = mid
    end
  end
  redis.call('LINSERT', ready, 'BEFORE', redis.call('LINDEX', ready, hi), task)
end

-- The same task with one more attempt counted, and whether that used its last one.
local function countAttempt(task)
  local _, attempts, maxAttempts = string.match(task, TASK_HEADER)
  local counted = tonumber(attempts) + 1
  local bumped = string.gsub(task, '^({"priority":%-?%d+,"id":"[^"]*","name":"[^"]*","attempts":)%d+', '%1' .. counted, 1)
  return bumped, counted >= tonumber(maxAttempts)
end

-- Files a task that has no attempts left, newest first, keeping at most `cap`.
local function failTask(failed, task, err, now, cap)
  redis.call('LPUSH', failed, '{"error":' .. cjson.encode(err) .. ',"failedAt":' .. now .. ',"task":' .. task .. '}')
  redis.call('LTRIM', failed, 0, cap - 1)
end

-- Puts a task in the delayed set until `dueAt` and rings the queue's doorbell with "<delayed key> <dueAt>": a worker
-- whose promote loop sleeps past `dueAt` (it sleeps until the earliest due task it saw) wakes for it.
local function delayTask(delayed, bell, task, dueAt)
  redis.call('ZADD', delayed, dueAt, task)
  redis.call('SPUBLISH', bell, delayed .. ' ' .. dueAt)
end

-- Adds a task: ready (at the back of its priority) when `dueAt` is not after `now`, else delayed until then (and
-- `bell` rung). A caller whose tasks are always due at once (ads' learning) has no bell to pass.
local function enqueueTask(ready, delayed, task, dueAt, now, bell)
  if dueAt > now then
    delayTask(delayed, bell, task, dueAt)
  else
    insertTask(ready, task, false)
  end
end
