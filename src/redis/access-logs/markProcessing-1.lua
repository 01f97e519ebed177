--[[
  markProcessing: an upload stored whole is handed to the processors (PROCESSING), unless it is no longer being
  stored (failed as abandoned while its uploader was slow).

  KEYS[1] record: hash, the upload (status, ...)

  Returns 1, or 0 when the upload is not UPLOADING (nothing is written).
]]
local record = KEYS[1]
if redis.call('HGET', record, 'status') ~= 'UPLOADING' then
  return 0
end
redis.call('HSET', record, 'status', 'PROCESSING')
return 1
