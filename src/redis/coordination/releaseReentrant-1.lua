--[[
  releaseReentrant: leaves a reentrant lock once, but only for its holder; at depth 0 it is free and its doorbell
  rings if someone waits for it.

  KEYS[1] lock: string, "<owner> <token> <depth> <fence>[+]", expiring with the lease; also the name of its doorbell,
          a sharded pub/sub channel (keys.ts: reentrantLock)
  ARGV[1] token: the holder's token

  Returns the depth left (0: free), or -1 when the token does not hold the lock (its lease ended; nothing written).
]]
--- @include lib/reentrant
local lock = KEYS[1]
local token = ARGV[1]
return reentrantRelease(lock, token, lock)
