-- A lock's owner key holds its holder's token, with WAITED appended once someone waits for it (tokens are
-- UUIDs, which have no '+'): the mark dies with the lease, so a dead waiter costs one ring at most.
local WAITED = '+'

-- The owner key's value when `token` holds the lock (marked or not), else false.
local function heldBy(owner, token)
  local held = redis.call('GET', owner)
  if held == token or held == token .. WAITED then
    return held
  end
  return false
end

local function waitedFor(held)
  return string.sub(held, -1) == WAITED
end
