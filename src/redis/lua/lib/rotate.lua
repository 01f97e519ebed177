-- rotateHourly: keeps `current` to one hour. When `start` holds an earlier hour, `current` becomes `last` (and
-- `start` `lastStart`); when `start` is missing it is set, so rotation starts (the book's code never set it).
-- hour: the start of the caller's hour (ms).
local function rotateHourly(current, start, last, lastStart, hour)
  local started = tonumber(redis.call('GET', start))
  if started and started >= hour then
    return
  end
  if started and redis.call('EXISTS', current) == 1 then
    redis.call('RENAME', current, last)
    redis.call('SET', lastStart, started)
  end
  redis.call('SET', start, hour)
end
