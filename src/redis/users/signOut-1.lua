-- signOut: move the session revocations' head and ring its doorbell with the revoked token's hash and the
-- channel where the processes that hear it confirm (the session itself is deleted first, on its own slot).
-- Rings "<head key> <new value> <token hash> <ack channel>". Returns {the new value, how many subscribers the ring reached}.
local head = KEYS[1]
local bell, tokenHash, ackChannel = ARGV[1], ARGV[2], ARGV[3]
local value = redis.call('INCR', head)
local receivers = redis.call('SPUBLISH', bell, head .. ' ' .. value .. ' ' .. tokenHash .. ' ' .. ackChannel)
return { value, receivers }
