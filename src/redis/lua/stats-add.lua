-- stats-add: merge a batch of samples into a statistic of the current hour (the book's update_stats, which
-- took one sample): min, max, count, sum and sum of squares; the hour rotates first.
-- KEYS[1] current  KEYS[2] start  KEYS[3] last  KEYS[4] lastStart
-- ARGV[1] the hour (ms)  ARGV[2] count  ARGV[3] sum  ARGV[4] sum of squares  ARGV[5] min  ARGV[6] max
-- Returns {count, sum} of the hour so far, as strings.
rotateHourly(KEYS[1], KEYS[2], KEYS[3], KEYS[4], tonumber(ARGV[1]))
local min, max = tonumber(ARGV[5]), tonumber(ARGV[6])
local oldMin = tonumber(redis.call('ZSCORE', KEYS[1], 'min'))
if not oldMin or min < oldMin then
  redis.call('ZADD', KEYS[1], min, 'min')
end
local oldMax = tonumber(redis.call('ZSCORE', KEYS[1], 'max'))
if not oldMax or max > oldMax then
  redis.call('ZADD', KEYS[1], max, 'max')
end
local count = redis.call('ZINCRBY', KEYS[1], ARGV[2], 'count')
local sum = redis.call('ZINCRBY', KEYS[1], ARGV[3], 'sum')
redis.call('ZINCRBY', KEYS[1], ARGV[4], 'sumsq')
return { count, sum }
