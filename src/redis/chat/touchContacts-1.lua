--[[
  touchContacts: move contacts to the front of a user's recent-contacts list, capped (the book's
  add_update_contact, for several names at once). When the list already starts with these names in that order
  (someone writing to the same chat again), nothing is written.

  KEYS[1] contacts: list, the user's recent contacts, newest first
  ARGV[1] cap: the most contacts kept
  ARGV[2..] names: one username each; the last one ends up first

  Returns 1 when it wrote, 0 when the list already started with the names.
]]
local contacts = KEYS[1]
local cap = tonumber(ARGV[1])
local namesAt = 2
local n = #ARGV - namesAt + 1
local head = redis.call('LRANGE', contacts, 0, n - 1)
local unchanged = #head == n
local h = 1
for i = #ARGV, namesAt, -1 do -- the list's head is the names, last first
  if not unchanged then
    break
  end
  unchanged = head[h] == ARGV[i]
  h = h + 1
end
if not unchanged then
  for i = namesAt, #ARGV do
    redis.call('LREM', contacts, 0, ARGV[i])
    redis.call('LPUSH', contacts, ARGV[i])
  end
  redis.call('LTRIM', contacts, 0, cap - 1)
  return 1
end
return 0
