--[[
  readDocuments: documents of one shard as a viewer sees them, in one step (what a page of a search shows: one call
  per shard however many documents it has).

  KEYS[1..] documents: the documents' hashes, then (only when `viewer` is given) the sets of who voted for each, in
    the same order
  ARGV[1] content: '1' to read the content too
  ARGV[2] viewer: the user whose votes are asked ('' for none)

  Returns per document {title, author, updated, votes, content or false, 1 when the viewer voted else 0}, or false
  when there is none.
]]
local content, viewer = ARGV[1] == '1', ARGV[2]
local n = viewer == '' and #KEYS or #KEYS / 2
local out = {}
for i = 1, n do
  local d = content and redis.call('HMGET', KEYS[i], 'title', 'author', 'updated', 'votes', 'content')
    or redis.call('HMGET', KEYS[i], 'title', 'author', 'updated', 'votes')
  if d[1] then
    d[5] = d[5] or false
    d[6] = viewer ~= '' and redis.call('SISMEMBER', KEYS[n + i], viewer) or 0
    out[i] = d
  else
    out[i] = false
  end
end
return out
