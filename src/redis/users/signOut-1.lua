--[[
  signOut: moves the session revocations' head and rings its doorbell with the revoked token's hash and the channel
  where the processes that hear it confirm (the session itself is deleted first, on its own slot). The ring says
  "<head key> <new value> <token hash> <ack channel>".

  KEYS[1] head: string, a counter that moves on every revocation
  ARGV[1] bell: the sharded pub/sub channel of revocations
  ARGV[2] tokenHash: the SHA-256 of the revoked token
  ARGV[3] ackChannel: where the processes that heard the ring confirm it

  Returns {the new value, how many subscribers the ring reached}.
]]
local head = KEYS[1]
local bell, tokenHash, ackChannel = ARGV[1], ARGV[2], ARGV[3]
local value = redis.call('INCR', head)
local receivers = redis.call('SPUBLISH', bell, head .. ' ' .. value .. ' ' .. tokenHash .. ' ' .. ackChannel)
return { value, receivers }
