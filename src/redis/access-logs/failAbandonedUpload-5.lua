--[[
  failAbandonedUpload: an upload whose uploader died before announcing it (its time in `unannounced` has passed)
  leaves Redis as a failed upload does: FAILED, its data gone, its bytes given back to the bound. An upload announced
  or released meanwhile, or whose time has not passed, is left alone.

  KEYS[1] held: string, bytes of uploads held in Redis
  KEYS[2] record: hash, the upload (bytes, status, ...)
  KEYS[3] data: string, the file as uploaded
  KEYS[4] shares: set, the processors done with their share
  KEYS[5] unannounced: sorted set, upload id → the time (ms) by which its uploader announces it
  ARGV[1] id: the upload's id
  ARGV[2] now: the caller's time, in ms
  ARGV[3] keptMs: how long the record is kept, in ms

  Returns 1 when this call failed it, 0 otherwise.
]]
--- @include lib/release-upload
local held, record, data, shares, unannounced = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, now, keptMs = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local deadline = tonumber(redis.call('ZSCORE', unannounced, id))
if not deadline or deadline > now then
  return 0
end
return releaseUpload(held, record, data, shares, unannounced, id, 'FAILED', keptMs)
