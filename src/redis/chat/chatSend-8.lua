-- chat-send: store the next message of a chat, enforce the backlog bound, trim, ring the doorbell.
-- KEYS[1] chat meta  KEYS[2] seq  KEYS[3] version  KEYS[4] members  KEYS[5] messages  KEYS[6] gaps
-- KEYS[7] scheduled (scheduled message id → message id)  KEYS[8] scheduled times (scheduled message id → ms sent)
-- ARGV[1] sender  ARGV[2] text  ARGV[3] backlog  ARGV[4] history  ARGV[5] doorbell channel  ARGV[6] claim lease (ms)
-- ARGV[7] largest message (bytes of JSON) the doorbell carries  ARGV[8] largest chat whose members are returned
-- ARGV[9] the scheduled message this sends ('' for none): sent once, however often the send is retried or
-- raced within SCHEDULED_MEMO_MS (the memo of which was sent is then forgotten)
-- The doorbell says "<version key> <new version> <message JSON>" (without the JSON for a larger message): a
-- subscriber that has read up to the previous version may deliver it without reading the chat.
-- Members more than `backlog` messages behind lose their oldest unread messages, down to 90% of the backlog (so
-- a member who stays away gets one gap notice per tenth of the backlog, not one per message); what they lost is
-- merged into their entry in the gaps outbox ("from:to:claimedUntil"). Then messages every member has read are
-- deleted, except the most recent `history`.
-- Returns {-1} when the chat does not exist, {-2} when the sender is not a member (nothing is written), {-3, id}
-- when the scheduled message ARGV[9] was already sent as message `id` (nothing is written), else
-- {id, sentAt, members, user1, from1, to1, ...}: the new message; the members (comma-separated, for the sender's
-- contacts) when the chat has at most ARGV[8] of them, else ''; and the gap entries this call claimed for delivery (an
-- entry is claimed for the lease; the caller delivers it and then runs chat-gap-done; if the caller dies first,
-- a send after the lease claims it again).
--- @include lib/now
--- @include lib/trim-read
if redis.call('EXISTS', KEYS[1]) == 0 then
  return { -1 }
end
if ARGV[9] ~= '' then
  local sent = redis.call('HGET', KEYS[7], ARGV[9])
  if sent then
    return { -3, tonumber(sent) }
  end
end
if not redis.call('ZSCORE', KEYS[4], ARGV[1]) then
  return { -2 }
end
local now = nowMs()
local id = redis.call('INCR', KEYS[2])
local json = cjson.encode({ id = id, sender = ARGV[1], text = ARGV[2], sentAt = now })
redis.call('ZADD', KEYS[5], id, json)
if ARGV[9] ~= '' then
  local SCHEDULED_MEMO_MS = 86400000
  local old = redis.call('ZRANGEBYSCORE', KEYS[8], '-inf', now - SCHEDULED_MEMO_MS, 'LIMIT', 0, 100)
  if #old > 0 then
    redis.call('HDEL', KEYS[7], unpack(old))
    redis.call('ZREM', KEYS[8], unpack(old))
  end
  redis.call('HSET', KEYS[7], ARGV[9], id)
  redis.call('ZADD', KEYS[8], now, ARGV[9])
end
redis.call('HSET', KEYS[1], 'lastAt', now)

local backlog = tonumber(ARGV[3])
local floor = id - backlog
if floor > 0 then
  local moveTo = floor + math.floor(backlog / 10)
  local lagging = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. floor, 'WITHSCORES')
  for i = 1, #lagging, 2 do
    local user, read = lagging[i], tonumber(lagging[i + 1])
    local entry = redis.call('HGET', KEYS[6], user)
    local from, claimed = read + 1, 0
    if entry then
      local f, _, c = string.match(entry, '^(%d+):(%d+):(%d+)$')
      from, claimed = tonumber(f), tonumber(c)
    end
    redis.call('HSET', KEYS[6], user, from .. ':' .. moveTo .. ':' .. claimed)
    redis.call('ZADD', KEYS[4], moveTo, user)
  end
end

trimRead(KEYS[4], KEYS[5], id, tonumber(ARGV[4]))

local members = ''
if redis.call('ZCARD', KEYS[4]) <= tonumber(ARGV[8]) then
  members = table.concat(redis.call('ZRANGE', KEYS[4], 0, -1), ',')
end
local result = { id, now, members }
if redis.call('HLEN', KEYS[6]) > 0 then
  local entries = redis.call('HGETALL', KEYS[6])
  for i = 1, #entries, 2 do
    local from, to, claimed = string.match(entries[i + 1], '^(%d+):(%d+):(%d+)$')
    if tonumber(claimed) <= now then
      redis.call('HSET', KEYS[6], entries[i], from .. ':' .. to .. ':' .. (now + tonumber(ARGV[6])))
      table.insert(result, entries[i])
      table.insert(result, tonumber(from))
      table.insert(result, tonumber(to))
    end
  end
end

local bell = KEYS[3] .. ' ' .. redis.call('INCR', KEYS[3])
if #json <= tonumber(ARGV[7]) then
  bell = bell .. ' ' .. json
end
redis.call('SPUBLISH', ARGV[5], bell)
return result
