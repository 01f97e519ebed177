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

local WAITED_BYTE = string.byte(WAITED)

-- Whether a lock's value carries the WAITED mark (its last byte: no new string made).
local function waitedFor(held)
  return string.byte(held, -1) == WAITED_BYTE
end
