-- Live search (searchChanged, docs/search.md "Live search"): every change of the shard's documents is one entry of
-- the shard's change log, "<seq> <json>" scored by its sequence number, written by the script that makes the change;
-- json: {k = kind (i index, v vote, d delete), id, w = the document's words after the change (space-separated; ''
-- after a delete), f = their weighted frequencies in the same order and l = its weighted length (index only: what
-- RELEVANCE's BM25 needs of it, as the postings and lengths hold them), b = its words before the change that it no longer has, and what the sorts need after the change:
-- u = updated (ms), n = votes, t = the lower-cased title (index only: a vote leaves it, a delete ends it)}. The log's
-- head moves and its doorbell rings with "<seq key> <seq>". Gateway processes with live queries read the entries
-- past their cursor and move their live tops from them. The log keeps the newest LIVE_LOG_KEEP entries: a reader
-- that fell further behind sees the gap and searches again every live query it has.
local LIVE_LOG_KEEP = 1024

local function searchChanged(seqKey, logKey, bell, change)
  local seq = redis.call('INCR', seqKey)
  redis.call('ZADD', logKey, seq, seq .. ' ' .. cjson.encode(change))
  redis.call('ZREMRANGEBYSCORE', logKey, '-inf', seq - LIVE_LOG_KEEP)
  redis.call('SPUBLISH', bell, seqKey .. ' ' .. seq)
end
