-- lock-release: free a lock, but only for its holder, and ring the lock's doorbell for waiters.
-- KEYS[1] lock owner
-- ARGV[1] the holder's token  ARGV[2] doorbell channel
-- Returns 1 when released, 0 when the lease had already ended (expired, or taken by another holder).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
-- A value no GET can return and no other release repeats: every release wakes the waiters' pollers.
redis.call('SPUBLISH', ARGV[2], KEYS[1] .. ' free:' .. ARGV[1])
return 1
