-- contacts-touch: move contacts to the front of a user's recent-contacts list, capped (the book's
-- add_update_contact, for several names at once).
-- KEYS[1] user contacts
-- ARGV[1] cap  ARGV[2..] names, the last one ends up first
-- When the list already starts with these names in that order (someone writing to the same chat again), nothing
-- is written. Returns the list's length.
local n = #ARGV - 1
local head = redis.call('LRANGE', KEYS[1], 0, n - 1)
local unchanged = #head == n
for i = 1, n do
  if not unchanged then
    break
  end
  unchanged = head[i] == ARGV[#ARGV - i + 1]
end
if not unchanged then
  for i = 2, #ARGV do
    redis.call('LREM', KEYS[1], 0, ARGV[i])
    redis.call('LPUSH', KEYS[1], ARGV[i])
  end
  redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[1]) - 1)
end
return redis.call('LLEN', KEYS[1])
