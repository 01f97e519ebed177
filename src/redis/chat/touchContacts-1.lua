-- touchContacts: move contacts to the front of a user's recent-contacts list, capped (the book's
-- add_update_contact, for several names at once). When the list already starts with these names in that order
-- (someone writing to the same chat again), nothing is written. Returns the list's length.
local contacts = KEYS[1]
local cap = tonumber(ARGV[1]) -- then the names, from ARGV[2]; the last one ends up first
local n = #ARGV - 1
local head = redis.call('LRANGE', contacts, 0, n - 1)
local unchanged = #head == n
for i = 1, n do
  if not unchanged then
    break
  end
  unchanged = head[i] == ARGV[#ARGV - i + 1]
end
if not unchanged then
  for i = 2, #ARGV do
    redis.call('LREM', contacts, 0, ARGV[i])
    redis.call('LPUSH', contacts, ARGV[i])
  end
  redis.call('LTRIM', contacts, 0, cap - 1)
end
return redis.call('LLEN', contacts)
