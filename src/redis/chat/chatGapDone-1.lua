-- chat-gap-done: after a gap notification was delivered, remove its outbox entry unless it grew meanwhile.
-- KEYS[1] chat gaps
-- ARGV[1] member  ARGV[2] from  ARGV[3] to (as delivered)
-- An entry that grew since it was claimed is released (claim 0) so the next send delivers the larger gap.
-- Returns 1 when removed, 0 otherwise.
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then
  return 0
end
local from, to = string.match(entry, '^(%d+):(%d+):')
if from == ARGV[2] and to == ARGV[3] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return 1
end
redis.call('HSET', KEYS[1], ARGV[1], from .. ':' .. to .. ':0')
return 0
