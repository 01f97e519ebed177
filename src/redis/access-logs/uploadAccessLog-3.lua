--[[
  uploadAccessLog: make room for an upload under the bound on bytes held in Redis, and record it, with the time by
  which its uploader announces it (past it, the uploader is taken for dead and the upload fails). Refuses an
  upload that would pass the bound.

  KEYS[1] held: string, bytes of uploads held in Redis
  KEYS[2] record: hash, the upload (filename, bytes, uploader, processors, createdAt, status, lines, errors)
  KEYS[3] unannounced: sorted set, upload id → the time (ms) by which its uploader announces it
  ARGV[1] bytes: the upload's size, in bytes
  ARGV[2] bound: the most bytes held in Redis
  ARGV[3] filename: the uploaded file's name
  ARGV[4] uploader: the uploader's username
  ARGV[5] processors: how many processors share the file
  ARGV[6] now: the upload's time, in ms
  ARGV[7] id: the upload's id
  ARGV[8] deadline: the time (ms) by which its uploader announces it

  Returns 1, or 0 when the upload would pass the bound (nothing is written).
]]
local held, record, unannounced = KEYS[1], KEYS[2], KEYS[3]
local bytes, bound, filename, uploader, processors, now, id, deadline =
  tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]
if tonumber(redis.call('GET', held) or '0') + bytes > bound then
  return 0
end
redis.call('INCRBY', held, bytes)
redis.call('HSET', record, 'filename', filename, 'bytes', bytes, 'uploader', uploader, 'processors', processors,
  'createdAt', now, 'status', 'UPLOADING', 'lines', 0, 'errors', 0)
redis.call('ZADD', unannounced, deadline, id)
return 1
