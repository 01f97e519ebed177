-- Live documents (documentChanged, docs/search.md "Live documents"): each change of a document moves its head, a
-- field of its hash, to the shard's change counter at that change (never the same value twice, even across a
-- deletion), and rings the document's doorbell with "<doc key> <head>"; a deletion takes the hash, head and all,
-- and rings with "<doc key>" alone, so that the watchers read the head (gone).
local function documentMoved(doc, bell, head)
  redis.call('HSET', doc, 'head', head)
  redis.call('SPUBLISH', bell, doc .. ' ' .. head)
end

local function documentGone(doc, bell)
  redis.call('SPUBLISH', bell, doc)
end
