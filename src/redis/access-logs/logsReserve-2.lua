-- logs-reserve: make room for an upload under the bound on bytes held in Redis, and record it.
-- KEYS[1] held bytes  KEYS[2] the upload's record
-- ARGV[1] bytes  ARGV[2] the bound  ARGV[3] filename  ARGV[4] uploader  ARGV[5] processors  ARGV[6] now (ms)
-- Returns 1, or 0 when the upload would pass the bound (nothing is written).
local held = tonumber(redis.call('GET', KEYS[1]) or '0')
if held + tonumber(ARGV[1]) > tonumber(ARGV[2]) then
  return 0
end
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'filename', ARGV[3], 'bytes', ARGV[1], 'uploader', ARGV[4], 'processors', ARGV[5],
  'createdAt', ARGV[6], 'status', 'UPLOADING', 'lines', 0, 'errors', 0)
return 1
