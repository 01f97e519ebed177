-- logs-release: an upload leaves Redis (stored in part and abandoned, or processed by every processor): its data
-- goes and its bytes are given back to the bound. Only the first call gives them back.
-- KEYS[1] held bytes  KEYS[2] record  KEYS[3] data  KEYS[4] shares
-- ARGV[1] the status it ends with  ARGV[2] how long the record is kept (ms)
-- Returns 1 when this call released it, 0 when it had been already.
local status = redis.call('HGET', KEYS[2], 'status')
if not status or status == 'DONE' or status == 'FAILED' then
  return 0
end
redis.call('DECRBY', KEYS[1], redis.call('HGET', KEYS[2], 'bytes'))
redis.call('DEL', KEYS[3], KEYS[4])
redis.call('HSET', KEYS[2], 'status', ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
