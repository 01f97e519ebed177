-- finishSchedule: a scheduled message moves from its sender's pending index to the recently finished ones
-- (the newest `doneCap` kept), and its record and that index expire after `retentionMs` unless touched again.
--- @include lib/now
local function finishSchedule(record, pending, done, id, retentionMs, doneCap)
  redis.call('PEXPIRE', record, retentionMs)
  redis.call('ZREM', pending, id)
  redis.call('ZADD', done, nowMs(), id)
  redis.call('ZREMRANGEBYRANK', done, 0, -(doneCap + 1))
  redis.call('PEXPIRE', done, retentionMs)
end
