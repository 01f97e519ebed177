--[[
  cacheClaim: after a miss, reads the entry again and, still missing, takes its lock so that the caller alone
  computes it (single flight across processes).

  KEYS[1] value: string, 'v' + JSON, '-' (absent) or '~' (invalidated: a miss)
  KEYS[2] lock: string, the computing process's token, expiring with its lease
  ARGV[1] token: the caller's random token
  ARGV[2] leaseMs: the lease's length

  Returns {1, value} when the entry is there, {2} when the caller took the lock, else {0, ms left on the holder's
  lease}.
]]
local value, lock = KEYS[1], KEYS[2]
local token, leaseMs = ARGV[1], ARGV[2]
local stored = redis.call('GET', value)
if stored and stored ~= '~' then
  return { 1, stored }
end
if redis.call('SET', lock, token, 'NX', 'PX', leaseMs) then
  return { 2 }
end
return { 0, math.max(redis.call('PTTL', lock), 1) }
