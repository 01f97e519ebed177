--[[
  admitCounterNames: admit counter names into the deployment's registry of names (the book's `known:`), which holds
  at most `max`: names come from clients, so every process and every restart shares this one bound. The first
  `reserved` names are admitted however full it is.

  KEYS[1] registry: sorted set of the counters' names, every score 0
  ARGV[1] max: the most names the registry holds
  ARGV[2] reserved: how many of the first names are admitted however full it is
  ARGV[3..] names: one counter name each

  Returns a flag per name (1 in the registry, 0 refused), then the registry's size.
]]
local registry = KEYS[1]
local max, reserved = tonumber(ARGV[1]), tonumber(ARGV[2])
local FIRST_NAME = 3 -- ARGV: the first name
local size = redis.call('ZCARD', registry)
local flags = {}
for i = FIRST_NAME, #ARGV do
  local name = ARGV[i]
  if redis.call('ZSCORE', registry, name) then
    flags[#flags + 1] = 1
  elseif i - FIRST_NAME < reserved or size < max then
    redis.call('ZADD', registry, 0, name)
    size = size + 1
    flags[#flags + 1] = 1
  else
    flags[#flags + 1] = 0
  end
end
flags[#flags + 1] = size
return flags
