-- user-create: create a user's profile unless the name is taken.
-- KEYS[1] user:{<username>}:profile
-- ARGV[1] username  ARGV[2] password hash  ARGV[3] created-at (ms since epoch)
-- Returns 1 when created, 0 when the username is taken (nothing is written).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'username', ARGV[1], 'passwordHash', ARGV[2], 'createdAt', ARGV[3])
return 1
