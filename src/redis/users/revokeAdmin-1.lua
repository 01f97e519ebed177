--[[
  revokeAdmin: takes a stored admin grant back, unless it is the last one (the deployment would have no admin).

  KEYS[1] admins: set of the usernames holding a stored grant
  ARGV[1] username: whose grant goes

  Returns 1 when revoked, 0 when the user held no grant, STATUS.LAST_ADMIN for the last grant (nothing is written).
]]
local admins = KEYS[1]
local username = ARGV[1]
if redis.call('SISMEMBER', admins, username) == 0 then
  return 0
end
if redis.call('SCARD', admins) == 1 then
  return STATUS.LAST_ADMIN
end
redis.call('SREM', admins, username)
return 1
