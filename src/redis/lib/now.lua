-- nowMs: Redis's own clock in milliseconds, the one clock every caller shares.
local function nowMs()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end
