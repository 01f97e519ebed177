--[[
  releaseReentrant: leaves a reentrant lock once, but only for its holder; at depth 0 it is free and its doorbell
  rings if someone waits for it.

  KEYS[1] lock: string, "<owner> <token> <depth> <fence>[+]", expiring with the lease
  ARGV[1] token: the holder's token
  ARGV[2] bell: the lock's sharded pub/sub channel

  Returns the depth left (0: free), or -1 when the token does not hold the lock (its lease ended; nothing written).
]]
--- @include lib/reentrant
local lock = KEYS[1]
local token, bell = ARGV[1], ARGV[2]
return reentrantRelease(lock, token, bell)
