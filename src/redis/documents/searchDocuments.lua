--[[
  searchDocuments: one shard's part of a search. Stores the documents having a word of every group and none of
  the excluded words in `hits`, scored so that ascending (score, id) is the sort's order, for `ttl` seconds;
  keeps the first `resultMax`. When `total` exists, another search of the same query found the shard in the same
  state and made them: they are renewed and read, not made again (Redis runs one script at a time, so of many
  searches at once only the first makes them). The caller says what the sort means here (it names no sort): a match's score is the
  sum of its updated, votes and titleScores scores, each times its weight, those without a weight left out (none:
  every score 0, so the order is by id); then `rescore` may replace the scores by -BM25 (idf from every shard, given
  per group), or by positions in the order of the whole lower-cased titles (within runs that tie on titleScores) or
  of the ids, those orders descending when `descending`.

  KEYS[1] hits: sorted set, the shard's matches (the result), expiring after `ttl`
  KEYS[2] total: string, how many matched (past `resultMax` too), expiring with `hits`; absent: not made yet
  KEYS[3] updated: sorted set, id -> updated (ms)
  KEYS[4] votes: sorted set, id -> votes
  KEYS[5] titleScores: sorted set, id -> string_to_score of the lower-cased title
  KEYS[6] titles: hash, id -> the lower-cased title
  KEYS[7] lengths: hash, id -> the document's weighted length
  KEYS[8] scratch: sorted set, orders titles that tie in titleScores, deleted before the script returns
  KEYS[9] version: string, the shard's change counter (the matches' name has the version they are of)
  KEYS[10..] groupSets: a scratch sorted set per group (one per entry of packed.sizes; those written are deleted
    before the script returns), then the postings of every group's words in order (packed.sizes[g] of group g),
    then the postings of the excluded words, then the matches (hits and total, packed.drops pairs) of results the
    user's new one evicted, deleted first
  ARGV[1] packed: cjson {args = {...}, sizes = {...}, idf = {...}, drops = n}, one argument for what is the same in
    every shard (a command's arguments each cost the client): `args` holds, as strings, in order
    1 ttl: the result's TTL, seconds
    2 resultMax: the most matches kept
    3 top: how many of the first matches are returned
    4 weightUpdated: the weight of updated (ms) in a match's score; '' when the score leaves it out
    5 weightVotes: the weight of votes; '' when the score leaves it out
    6 weightTitle: the weight of titleScores; '' when the score leaves it out
    7 rescore: 'bm25', 'title' or 'id' (what replaces the scores, as above); '' to keep them
    8 descending: '1' when the positions of 'title' or 'id' count from the end of their order, else '0'
    9 avgLength: bm25: the average document length over every shard
    10 k1: bm25: BM25's k1
    11 b: bm25: BM25's b
    then per group of query words its number of words (sizes) and its idf; how many evicted results' matches are
    deleted (drops)
  ARGV[2] expected: the version `hits` and `total` are named by; when the shard is at another, nothing is done
    ('' to skip the check: the caller read the version with what else decides the matches, BM25's statistics)

  Returns {matches, {id, score, ...} of the first `top`, 1 when this search made them or 0 when it found them}, or
  {STATUS.CHANGED, the shard's version} when it is not `expected` (the caller names the matches by it and calls again).
]]
--- @include lib/chunks
local hits, total, updated, votes, titleScores, titles, lengths, scratch, version =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local packed = cjson.decode(ARGV[1])
local given = packed.args
local ttl, resultMax, top = tonumber(given[1]), tonumber(given[2]), tonumber(given[3])
local expected = ARGV[2]
local sizes, idf, drops = packed.sizes, packed.idf, packed.drops
local dropsAt = #KEYS - 2 * drops + 1
if drops > 0 then
  redis.call('DEL', unpack(KEYS, dropsAt, #KEYS))
end
local read = redis.call('MGET', total, version)
local known, now = tonumber(read[1]), read[2] or '0'
if expected ~= '' and now ~= expected then
  return { STATUS.CHANGED, now }
end

local function firstOf(count)
  return top > 0 and count > 0 and redis.call('ZRANGE', hits, 0, top - 1, 'WITHSCORES') or {}
end
if known and (known == 0 or redis.call('EXPIRE', hits, ttl) == 1) then
  redis.call('EXPIRE', total, ttl)
  return { known, firstOf(known), 0 }
end

local weightUpdated, weightVotes, weightTitle = given[4], given[5], given[6]
local rescore, descending = given[7], given[8] == '1'
local avgLength, k1, b = tonumber(given[9]), tonumber(given[10]), tonumber(given[11])
local groups = #sizes
local setsAt = 10 -- a scratch key per group, then the postings
local postingsAt = setsAt + groups

-- each group as one sorted set: a word's postings, or the union (frequencies summed) of its words'
local sets, k = {}, postingsAt
for g = 1, groups do
  local size = sizes[g]
  if size == 1 then
    sets[g] = KEYS[k]
  else
    sets[g] = KEYS[setsAt + g - 1]
    inChunks(size, function(first, last)
      redis.call('ZUNIONSTORE', sets[g], last - first + 2, sets[g], unpack(KEYS, k + first - 1, k + last - 1))
    end)
  end
  k = k + size
end

local keys, weights = {}, {}
-- bm25 reads each match's frequency of the first group from its score (weight 1), of the others by ZMSCORE
for g = 1, groups do
  keys[g], weights[g] = sets[g], (g == 1 and rescore == 'bm25') and 1 or 0
end
local function by(key, weight)
  if weight ~= '' then
    keys[#keys + 1], weights[#weights + 1] = key, weight
  end
end
by(updated, weightUpdated)
by(votes, weightVotes)
by(titleScores, weightTitle)
local args = { hits, #keys }
for i = 1, #keys do
  args[#args + 1] = keys[i]
end
args[#args + 1] = 'WEIGHTS'
for i = 1, #weights do
  args[#args + 1] = weights[i]
end
local matched = redis.call('ZINTERSTORE', unpack(args))
inChunks(dropsAt - k, function(first, last)
  matched = redis.call('ZDIFFSTORE', hits, last - first + 2, hits, unpack(KEYS, k + first - 1, k + last - 1))
end)

-- byWholeTitle: ids in the order of their whole lower-cased titles (bytes), then ids. Redis orders the members
-- of equal score by their bytes, so "<title>\0<id>" members of the scratch set sort so (Lua's < would follow
-- the server's locale); descending reads them backwards and puts each title's ids back in ascending order.
local function byWholeTitle(ids)
  inChunks(#ids, function(first, last)
    local found, members = redis.call('HMGET', titles, unpack(ids, first, last)), {}
    for m = first, last do
      members[#members + 1] = 0
      members[#members + 1] = (found[m - first + 1] or '') .. '\0' .. ids[m]
    end
    redis.call('ZADD', scratch, unpack(members))
  end)
  local sorted = descending and redis.call('ZRANGE', scratch, 0, -1, 'REV') or redis.call('ZRANGE', scratch, 0, -1)
  redis.call('DEL', scratch)
  local out, i = {}, 1
  while i <= #sorted do
    local title, j = string.match(sorted[i], '^(.*)%z'), i
    while descending and j < #sorted and string.match(sorted[j + 1], '^(.*)%z') == title do
      j = j + 1
    end
    for m = j, i, -1 do
      out[#out + 1] = string.match(sorted[m], '%z([^%z]*)$')
    end
    i = j + 1
  end
  return out
end

-- rescored matches: ZADD in slices
local function storeScores(entries)
  inChunks(#entries, function(first, last)
    redis.call('ZADD', hits, unpack(entries, first, last))
  end)
end
if matched > 0 and rescore == 'bm25' then
  local ranged, ids, firstTf, entries = redis.call('ZRANGE', hits, 0, -1, 'WITHSCORES'), {}, {}, {}
  for i = 1, #ranged, 2 do
    ids[#ids + 1], firstTf[#firstTf + 1] = ranged[i], ranged[i + 1]
  end
  inChunks(#ids, function(first, last)
    local slice = { unpack(ids, first, last) }
    local lengthOf = redis.call('HMGET', lengths, unpack(slice))
    local tfs = {}
    for g = 2, groups do
      tfs[g] = redis.call('ZMSCORE', sets[g], unpack(slice))
    end
    for j = 1, #slice do
      local norm = k1 * (1 - b + b * tonumber(lengthOf[j]) / avgLength)
      local score = 0
      for g = 1, groups do
        local tf = tonumber(g == 1 and firstTf[first + j - 1] or tfs[g][j])
        score = score + idf[g] * (tf * (k1 + 1) / (tf + norm))
      end
      entries[#entries + 1] = -score
      entries[#entries + 1] = slice[j]
    end
  end)
  storeScores(entries)
elseif matched > 0 and rescore == 'title' then
  -- string_to_score orders by the first six bytes; runs that tie there are ordered by the whole title, then id
  local ranged, order = redis.call('ZRANGE', hits, 0, -1, 'WITHSCORES'), {}
  local i = 1
  while i <= #ranged do
    local j = i
    while j + 2 <= #ranged and ranged[j + 3] == ranged[i + 1] do
      j = j + 2
    end
    if j == i then
      order[#order + 1] = ranged[i]
    else
      local run = {}
      for m = i, j, 2 do
        run[#run + 1] = ranged[m]
      end
      run = byWholeTitle(run)
      for _, id in ipairs(run) do
        order[#order + 1] = id
      end
    end
    i = j + 2
  end
  local entries = {}
  for position, id in ipairs(order) do
    entries[#entries + 1] = position
    entries[#entries + 1] = id
  end
  storeScores(entries)
elseif matched > 0 and rescore == 'id' then
  local entries = {}
  for position, id in ipairs(redis.call('ZRANGE', hits, 0, -1)) do
    entries[#entries + 1] = descending and matched - position + 1 or position
    entries[#entries + 1] = id
  end
  storeScores(entries)
end

for g = 1, groups do
  if sets[g] == KEYS[setsAt + g - 1] then
    redis.call('DEL', sets[g])
  end
end
redis.call('SET', total, matched, 'EX', ttl)
if matched > resultMax then
  redis.call('ZREMRANGEBYRANK', hits, resultMax, -1)
end
if matched > 0 then
  redis.call('EXPIRE', hits, ttl)
end
return { matched, firstOf(matched), 1 }
