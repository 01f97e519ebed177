-- contacts-touch: move contacts to the front of a user's recent-contacts list, capped (the book's
-- add_update_contact, for several names at once).
-- KEYS[1] user contacts
-- ARGV[1] cap  ARGV[2..] names, the last one ends up first
-- Returns the list's length.
for i = 2, #ARGV do
  redis.call('LREM', KEYS[1], 0, ARGV[i])
  redis.call('LPUSH', KEYS[1], ARGV[i])
end
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[1]) - 1)
return redis.call('LLEN', KEYS[1])
