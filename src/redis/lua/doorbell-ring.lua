-- doorbell-ring: move a head key and ring its doorbell, for mailboxes whose only content is the ring itself
-- (the session revocations: each ring names the revoked token's hash).
-- KEYS[1] head (a counter)
-- ARGV[1] doorbell channel (sharded, on the head's slot)  ARGV[2] what the ring carries
-- Rings "<head key> <new value> <data>". Returns the new value.
local value = redis.call('INCR', KEYS[1])
redis.call('SPUBLISH', ARGV[1], KEYS[1] .. ' ' .. value .. ' ' .. ARGV[2])
return value
