--[[
  uploadAccessLog: make room for an upload under the bound on bytes held in Redis, and record it. Refuses an
  upload that would pass the bound.

  KEYS[1] held: string, bytes of uploads held in Redis
  KEYS[2] record: hash, the upload (filename, bytes, uploader, processors, createdAt, status, lines, errors)
  ARGV[1] bytes: the upload's size, in bytes
  ARGV[2] bound: the most bytes held in Redis
  ARGV[3] filename: the uploaded file's name
  ARGV[4] uploader: the uploader's username
  ARGV[5] processors: how many processors share the file
  ARGV[6] now: the upload's time, in ms

  Returns 1, or 0 when the upload would pass the bound (nothing is written).
]]
local held, record = KEYS[1], KEYS[2]
local bytes, bound, filename, uploader, processors, now =
  tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6]
if tonumber(redis.call('GET', held) or '0') + bytes > bound then
  return 0
end
redis.call('INCRBY', held, bytes)
redis.call('HSET', record, 'filename', filename, 'bytes', bytes, 'uploader', uploader, 'processors', processors,
  'createdAt', now, 'status', 'UPLOADING', 'lines', 0, 'errors', 0)
return 1
