--[[
  writeLog: add lines to a log (the book's log_recent and log_common together): each line goes to the recent list
  (the newest `recentKept` kept) and its message is counted in the common set of the current hour (the `commonKept`
  most frequent kept; older than the previous hour expires).

  KEYS[1] recent: list of the newest lines, newest first
  KEYS[2] common: sorted set, message → count this hour
  KEYS[3] start: string, the hour (ms) `common` started
  KEYS[4] last: sorted set, the previous hour's `common`, kept when the hour rotates
  KEYS[5] lastStart: string, the hour (ms) `last` started
  ARGV[1] hour: the start of the caller's hour (ms)
  ARGV[2] recentKept: how many lines `recent` keeps
  ARGV[3] commonKept: how many messages `common` keeps
  ARGV[4..] lines: pairs of recent line and common message

  Returns 1.
]]
--- @include lib/rotate
local recent, common, start, last, lastStart = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local hour, recentKept, commonKept = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local FIRST_LINE = 4 -- ARGV: the first recent line, then its message, then the next line ...
rotateHourly(common, start, last, lastStart, hour)
for i = FIRST_LINE, #ARGV do
  if (i - FIRST_LINE) % 2 == 0 then
    redis.call('LPUSH', recent, ARGV[i])
  else
    redis.call('ZINCRBY', common, 1, ARGV[i])
  end
end
redis.call('LTRIM', recent, 0, recentKept - 1)
redis.call('ZREMRANGEBYRANK', common, 0, -(commonKept + 1))
expireWithHour(common, hour)
return 1
