-- lock-handoff: the holder passes the lock straight to a waiter of its own process (one round trip where a
-- release and the waiter's acquire would take two), with a new lease and the next fencing token.
-- KEYS[1] lock owner  KEYS[2] fencing counter
-- ARGV[1] the holder's token  ARGV[2] the waiter's token  ARGV[3] the waiter's lease (ms)
-- Returns the waiter's fencing token, or 0 when the holder's lease had already ended (nothing is written).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return redis.call('INCR', KEYS[2])
