-- addStats: merge a batch of samples into a statistic of the current hour (the book's update_stats, which
-- took one sample): min, max, count, sum and sum of squares; the hour rotates first, and statistics older than
-- the previous hour expire.
-- Returns {count, sum} of the hour so far, as strings.
--- @include lib/rotate
local current, start, last, lastStart = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local hour, count, sum, sumsq, min, max =
  tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
rotateHourly(current, start, last, lastStart, hour)
local oldMin = tonumber(redis.call('ZSCORE', current, 'min'))
if not oldMin or min < oldMin then
  redis.call('ZADD', current, min, 'min')
end
local oldMax = tonumber(redis.call('ZSCORE', current, 'max'))
if not oldMax or max > oldMax then
  redis.call('ZADD', current, max, 'max')
end
local total = redis.call('ZINCRBY', current, count, 'count')
local added = redis.call('ZINCRBY', current, sum, 'sum')
redis.call('ZINCRBY', current, sumsq, 'sumsq')
expireWithHour(current, hour)
return { total, added }
