-- admitCounterNames: admit counter names into the deployment's registry of names (the book's `known:`), which holds
-- at most `max`: names come from clients, so every process and every restart shares this one bound.
-- The registry is a sorted set, every score 0; the first `reserved` names are admitted however full it is.
-- Returns a flag per name (1 in the registry, 0 refused), then the registry's size.
local registry = KEYS[1]
local max, reserved = tonumber(ARGV[1]), tonumber(ARGV[2]) -- then the names, from ARGV[3]
local size = redis.call('ZCARD', registry)
local flags = {}
for i = 3, #ARGV do
  local name = ARGV[i]
  if redis.call('ZSCORE', registry, name) then
    flags[#flags + 1] = 1
  elseif i - 2 <= reserved or size < max then
    redis.call('ZADD', registry, 0, name)
    size = size + 1
    flags[#flags + 1] = 1
  else
    flags[#flags + 1] = 0
  end
end
flags[#flags + 1] = size
return flags
