-- lock-acquire: take a lock if it is free, with a lease, and hand out the next fencing token.
-- KEYS[1] lock owner  KEYS[2] fencing counter
-- ARGV[1] the caller's random token  ARGV[2] lease (ms)
-- Returns the fencing token (> 0, one more than the previous holder's) when taken; otherwise minus the
-- milliseconds left on the current holder's lease (at most -1).
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return -math.max(redis.call('PTTL', KEYS[1]), 1)
