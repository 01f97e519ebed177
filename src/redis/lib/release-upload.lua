-- releaseUpload: an access-log upload leaves Redis with `status` (DONE or FAILED): it leaves `unannounced`, its data
-- and its done shares go, its bytes are given back to the bound `held`, and its record is kept `keptMs`. Only the
-- first call gives the bytes back: 1 when this call released it, 0 when it had been already (or is gone).
local function releaseUpload(held, record, data, shares, unannounced, id, status, keptMs)
  redis.call('ZREM', unannounced, id)
  local current = redis.call('HGET', record, 'status')
  if not current or current == 'DONE' or current == 'FAILED' then
    return 0
  end
  redis.call('DECRBY', held, redis.call('HGET', record, 'bytes'))
  redis.call('DEL', data, shares)
  redis.call('HSET', record, 'status', status)
  redis.call('PEXPIRE', record, keptMs)
  return 1
end
