-- doorbell-ring: move a head key and ring its doorbell, for mailboxes whose only content is the ring itself
-- (the session revocations: each ring names the revoked token's hash and where to confirm it).
-- KEYS[1] head (a counter)
-- ARGV[1] doorbell channel (sharded, on the head's slot)  ARGV[2] what the ring carries
-- Rings "<head key> <new value> <data>". Returns {the new value, how many subscribers the ring reached}.
local head, bell, data = KEYS[1], ARGV[1], ARGV[2]
local value = redis.call('INCR', head)
local receivers = redis.call('SPUBLISH', bell, head .. ' ' .. value .. ' ' .. data)
return { value, receivers }
