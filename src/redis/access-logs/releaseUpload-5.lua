--[[
  releaseUpload: an upload leaves Redis (stored in part and abandoned, or processed by every processor): its data
  goes and its bytes are given back to the bound. Only the first call gives them back.

  KEYS[1] held: string, bytes of uploads held in Redis
  KEYS[2] record: hash, the upload (bytes, status, ...)
  KEYS[3] data: string, the file as uploaded
  KEYS[4] shares: set, the processors done with their share
  KEYS[5] unannounced: sorted set, upload id → the time (ms) by which its uploader announces it
  ARGV[1] id: the upload's id
  ARGV[2] status: the status it ends with, DONE or FAILED
  ARGV[3] keptMs: how long the record is kept, in ms

  Returns 1 when this call released it, 0 when it had been already.
]]
--- @include lib/release-upload
local held, record, data, shares, unannounced = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, status, keptMs = ARGV[1], ARGV[2], ARGV[3]
return releaseUpload(held, record, data, shares, unannounced, id, status, keptMs)
