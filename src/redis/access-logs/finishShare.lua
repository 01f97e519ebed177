--[[
  finishShare: a processor's share of an upload is counted, once: its visits are added (ZINCRBY: a second
  file of the same day adds) and its line and error counts recorded, in one step with marking the share done.
  Counts nothing unless the upload is being processed (PROCESSING): a processor that read it PROCESSING may finish
  after the upload was released (its done shares deleted), and must not count its share again. A share counted
  before is not counted again, but when every share is done the totals are answered again, so that a processor
  repeating the last share (after dying, or after the release failed, before the announcement was marked read)
  releases the upload that the first answer did not.

  KEYS[1] record: hash, the upload (processors, lines, errors, ...)
  KEYS[2] shares: set, the processors (1..N) done with their share
  KEYS[3..] visitSets: sorted sets, place → visits on one day at one level; one per element of ARGV[4], in order
  ARGV[1] share: the processor's number
  ARGV[2] lines: the lines in the share
  ARGV[3] errors: the malformed lines among them
  ARGV[4] visits: cjson [{"<place>": count, ...}, ...], the visits to add, one object per key of KEYS[3..]

  Returns {1} counted, {2, lines, errors} every share is done (counted now or before; the upload's totals), {0}
  counted before while shares are still to come, {3} the upload is not being processed (gone, not stored whole, or
  released: DONE or FAILED), nothing counted.
]]
local record, shares = KEYS[1], KEYS[2]
local share, lines, errors, visits = ARGV[1], ARGV[2], ARGV[3], cjson.decode(ARGV[4])
local visitSetsAt = 3
if redis.call('HGET', record, 'status') ~= 'PROCESSING' then
  return { 3 }
end
local processors = tonumber(redis.call('HGET', record, 'processors'))
if redis.call('SADD', shares, share) == 0 then
  if redis.call('SCARD', shares) >= processors then
    return { 2, tonumber(redis.call('HGET', record, 'lines')), tonumber(redis.call('HGET', record, 'errors')) }
  end
  return { 0 }
end
for i, counts in ipairs(visits) do
  local set = KEYS[visitSetsAt + i - 1]
  for place, count in pairs(counts) do
    redis.call('ZINCRBY', set, count, place)
  end
end
local totalLines = redis.call('HINCRBY', record, 'lines', lines)
local totalErrors = redis.call('HINCRBY', record, 'errors', errors)
if redis.call('SCARD', shares) >= processors then
  return { 2, totalLines, totalErrors }
end
return { 1 }
