--[[
  appendUpload: a chunk of an upload being stored is appended to its file, unless the upload is no longer being
  stored (failed as abandoned while its uploader was slow): then nothing is written.

  KEYS[1] record: hash, the upload (status, ...)
  KEYS[2] data: string, the file as uploaded
  ARGV[1] chunk: the bytes to append

  Returns 1, or 0 when the upload is not UPLOADING (nothing is written).
]]
local record, data = KEYS[1], KEYS[2]
local chunk = ARGV[1]
if redis.call('HGET', record, 'status') ~= 'UPLOADING' then
  return 0
end
redis.call('APPEND', data, chunk)
return 1
