--[[
  fenceReentrant: the fencing token of a reentrant lock's holder, drawn from the lock's counter the first time the
  holder asks and kept (in the lock's value) while the same owner holds it: higher than any a holder of the lock
  drew before.

  KEYS[1] lock: string, "<owner> <token> <depth> <fence>[+]", expiring with the lease (fence 0: not drawn yet)
  KEYS[2] fences: string, the lock's fencing counter
  ARGV[1] token: the holder's token

  Returns the fencing token (> 0), or 0 when the caller's lease had ended (nothing is written).
]]
--- @include lib/reentrant
local lock, fences = KEYS[1], KEYS[2]
return reentrantFence(lock, fences, ARGV[1])
