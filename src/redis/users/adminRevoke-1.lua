-- admin-revoke: take a stored admin grant back, unless it is the last one (the deployment would have no admin).
-- KEYS[1] the set of admins
-- ARGV[1] username
-- Returns 1 when revoked, 0 when the user held no grant, -1 when it is the last grant (nothing is written).
local admins, username = KEYS[1], ARGV[1]
if redis.call('SISMEMBER', admins, username) == 0 then
  return 0
end
if redis.call('SCARD', admins) == 1 then
  return -1
end
redis.call('SREM', admins, username)
return 1
