--[[
  releaseUpload: an upload leaves Redis (stored in part and abandoned, or processed by every processor): its data
  goes and its bytes are given back to the bound. Only the first call gives them back.

  KEYS[1] held: string, bytes of uploads held in Redis
  KEYS[2] record: hash, the upload (bytes, status, ...)
  KEYS[3] data: string, the file as uploaded
  KEYS[4] shares: set, the processors done with their share
  ARGV[1] status: the status it ends with, DONE or FAILED
  ARGV[2] keptMs: how long the record is kept, in ms

  Returns 1 when this call released it, 0 when it had been already.
]]
local held, record, data, shares = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local status, keptMs = ARGV[1], ARGV[2]
local current = redis.call('HGET', record, 'status')
if not current or current == 'DONE' or current == 'FAILED' then
  return 0
end
redis.call('DECRBY', held, redis.call('HGET', record, 'bytes'))
redis.call('DEL', data, shares)
redis.call('HSET', record, 'status', status)
redis.call('PEXPIRE', record, keptMs)
return 1
