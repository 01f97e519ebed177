-- rotateHourly: keeps `current` to one hour. When `start` holds an earlier hour, `current` becomes `last` (and
-- `start` `lastStart`); when `start` is missing it is set, so rotation starts (the book's code never set it).
-- hour: the start of the caller's hour (ms). Nothing outlives the hour after its own: `current` and `start` expire
-- two hours after `hour` begins, `last` and `lastStart` two hours after theirs did (RENAME carries the expiry over).
local HOUR_MS = 3600000
local function rotateHourly(current, start, last, lastStart, hour)
  local started = tonumber(redis.call('GET', start))
  if not (started and started >= hour) then
    if started and redis.call('EXISTS', current) == 1 then
      redis.call('RENAME', current, last)
      redis.call('SET', lastStart, started, 'PXAT', started + 2 * HOUR_MS)
    end
    redis.call('SET', start, hour, 'PXAT', hour + 2 * HOUR_MS)
  end
end

-- expireWithHour: `current` (just written) goes with its hour, as `start` does.
local function expireWithHour(current, hour)
  redis.call('PEXPIREAT', current, hour + 2 * HOUR_MS)
end
