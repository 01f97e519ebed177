-- Live search (searchChanged, docs/search.md "Live search"): every change of the shard's documents is one entry of
-- the shard's change log, "<seq> <kind> <id> <words>" scored by its sequence number (kind: i index, v vote, d
-- delete; words: the document's words before and after the change, space-separated), written by the script that
-- makes the change; the log's head moves and its doorbell rings with "<seq key> <seq>". Gateway processes with live
-- queries read the entries past their cursor and search again only the live queries the words can affect. The
-- log keeps the newest LIVE_LOG_KEEP entries: a reader that fell further behind sees the gap and searches again
-- every live query it has.
local LIVE_LOG_KEEP = 1024

local function searchChanged(seqKey, logKey, bell, kind, id, words)
  local seq = redis.call('INCR', seqKey)
  redis.call('ZADD', logKey, seq, seq .. ' ' .. kind .. ' ' .. id .. ' ' .. words)
  redis.call('ZREMRANGEBYSCORE', logKey, '-inf', seq - LIVE_LOG_KEEP)
  redis.call('SPUBLISH', bell, seqKey .. ' ' .. seq)
end
