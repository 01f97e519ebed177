-- lock-extend: give a holder's lease a new length from now, but only while it still holds the lock.
-- KEYS[1] lock owner
-- ARGV[1] the holder's token  ARGV[2] lease (ms)
-- Returns 1 when extended, 0 when the lease had already ended.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
