--[[
  acquireReentrant: takes a reentrant lock for an owner, or enters it once more when the owner holds it already
  (lib/reentrant.lua); a refused caller that will wait marks the lock, so that its release rings the doorbell. A new
  holder gets fencing token 0: it draws one when it asks (fenceReentrant).

  KEYS[1] lock: string, "<owner> <token> <depth> <fence>[+]", expiring with the lease
  ARGV[1] owner: who takes it (re-entering when it holds it)
  ARGV[2] token: the caller's random token, the lease's when the lock is free
  ARGV[3] leaseMs: the lease's length (a re-entry never shortens the lease)
  ARGV[4] waits: '1' when the caller waits for a release if the lock is held, else '0'
  ARGV[5] others: '1' when other waiters of the caller's process wait for the lock: it is taken marked

  Returns {1, 0, token, depth, ms left on the lease} when held, else {0, ms left on the holder's lease, holder}.
]]
--- @include lib/reentrant
local lock = KEYS[1]
local owner, token, leaseMs, waits, others = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
return reentrantAcquire(lock, false, owner, token, leaseMs, waits, others)
