-- writeLog: add lines to a log (the book's log_recent and log_common together): each line goes to the recent
-- list (the newest `cap` kept) and its message is counted in the common set of the current hour (the `commonCap`
-- most frequent kept; older than the previous hour expires).
-- Returns 1.
--- @include lib/rotate
local recent, common, start, last, lastStart = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- then, from ARGV[4], pairs of recent line and common message
local hour, cap, commonCap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
rotateHourly(common, start, last, lastStart, hour)
for i = 4, #ARGV, 2 do
  redis.call('LPUSH', recent, ARGV[i])
  redis.call('ZINCRBY', common, 1, ARGV[i + 1])
end
redis.call('LTRIM', recent, 0, cap - 1)
redis.call('ZREMRANGEBYRANK', common, 0, -(commonCap + 1))
expireWithHour(common, hour)
return 1
