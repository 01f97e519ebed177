--[[
  signUp: creates a user's profile unless the name is taken (system users too, with a password hash no password has).

  KEYS[1] profile: hash of the user: username, passwordHash, createdAt
  ARGV[1] username: lower case
  ARGV[2] passwordHash: scrypt$N$r$p$salt$hash, or '!' for a system user
  ARGV[3] createdAt: ms

  Returns 1 when created, STATUS.EXISTS when the username is taken (nothing is written).
]]
local profile = KEYS[1]
local username, passwordHash, createdAt = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', profile) == 1 then
  return STATUS.EXISTS
end
redis.call('HSET', profile, 'username', username, 'passwordHash', passwordHash, 'createdAt', createdAt)
return 1
