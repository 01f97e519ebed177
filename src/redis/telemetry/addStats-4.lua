--[[
  addStats: merge a batch of samples into a statistic of the current hour (the book's update_stats, which took one
  sample): min, max, count, sum and sum of squares; the hour rotates first, and statistics older than the previous
  hour expire.

  KEYS[1] current: sorted set, min, max, count, sum, sumsq of the current hour
  KEYS[2] start: string, the hour (ms) `current` started
  KEYS[3] last: sorted set, the previous hour's statistic, kept when the hour rotates
  KEYS[4] lastStart: string, the hour (ms) `last` started
  ARGV[1] hour: the start of the caller's hour (ms)
  ARGV[2] count: how many samples the batch has
  ARGV[3] sum: their sum
  ARGV[4] sumsq: the sum of their squares
  ARGV[5] min: the smallest sample
  ARGV[6] max: the largest sample

  Returns {count, sum} of the hour so far, as strings.
]]
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
