-- releaseUpload: an upload leaves Redis (stored in part and abandoned, or processed by every processor): its data
-- goes and its bytes are given back to the bound. Only the first call gives them back.
-- Returns 1 when this call released it, 0 when it had been already.
local held, record, data, shares = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local status, keptMs = ARGV[1], ARGV[2] -- the status it ends with; how long the record is kept
local current = redis.call('HGET', record, 'status')
if not current or current == 'DONE' or current == 'FAILED' then
  return 0
end
redis.call('DECRBY', held, redis.call('HGET', record, 'bytes'))
redis.call('DEL', data, shares)
redis.call('HSET', record, 'status', status)
redis.call('PEXPIRE', record, keptMs)
return 1
