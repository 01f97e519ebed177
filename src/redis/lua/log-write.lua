-- log-write: add lines to a log (the book's log_recent and log_common together): each line goes to the recent
-- list (the newest `cap` kept) and its message is counted in the common set of the current hour.
-- KEYS[1] recent  KEYS[2] common  KEYS[3] start  KEYS[4] last  KEYS[5] lastStart
-- ARGV[1] the hour (ms)  ARGV[2] cap  ARGV[3], ARGV[4], ...: pairs of recent line and common message
-- Returns 1.
rotateHourly(KEYS[2], KEYS[3], KEYS[4], KEYS[5], tonumber(ARGV[1]))
for i = 3, #ARGV, 2 do
  redis.call('LPUSH', KEYS[1], ARGV[i])
  redis.call('ZINCRBY', KEYS[2], 1, ARGV[i + 1])
end
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
return 1
