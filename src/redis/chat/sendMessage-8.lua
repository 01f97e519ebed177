--[[
  sendMessage: store the next message of a chat, enforce the backlog bound, trim, ring the doorbell.
  The doorbell says "<version key> <new version> <message JSON>" (without the JSON for a message larger than
  `doorbellMax` bytes): a subscriber that has read up to the previous version may deliver it without reading.
  Members more than `backlog` messages behind lose their oldest unread messages, down to 90% of the backlog (so
  a member who stays away gets one gap notice per tenth of the backlog, not one per message); what they lost is
  merged into their entry in the gaps outbox ("from:to:claimedUntil"). Then messages every member has read are
  deleted, except the most recent `history`. A scheduled message (scheduledId not '') is sent once, however often
  the send is retried or raced within SCHEDULED_MEMO_MS (the memo of which was sent is then forgotten).
  Refuses a chat that does not exist and a sender who is not a member. Every command counts at this rate, so
  trimming what everyone has read, which no promise needs at once, runs every `HOUSEKEEPING`th message (and when
  lagging members move); the gap outbox is looked at only in a chat past its backlog, the only kind that has one.

  KEYS[1] meta: hash, the chat's public (0/1), createdAt, createdBy
  KEYS[2] seq: string counter, the chat's last message id
  KEYS[3] version: string counter, the chat's version, bumped by the message
  KEYS[4] members: sorted set, member → read position
  KEYS[5] messages: sorted set, message id → message JSON {id, sender, text, sentAt}
  KEYS[6] gaps: hash, the gap outbox, member → "from:to:claimedUntil"
  KEYS[7] scheduled: hash, the memo of sent scheduled messages, scheduled message id → message id
  KEYS[8] scheduledAt: sorted set, the memo's times, scheduled message id → ms sent
  ARGV[1] sender: the sender's username
  ARGV[2] text: the message's text
  ARGV[3] backlog: the most unread messages a member keeps
  ARGV[4] history: how many of the most recent messages are kept even when everyone has read them
  ARGV[5] bell: the chat's doorbell channel; '' to return the ring instead (the caller rings once replicas have
    the message: REDIS_WAIT_REPLICAS)
  ARGV[6] claimMs: how long a gap entry claimed for delivery stays claimed, in ms
  ARGV[7] doorbellMax: the largest message JSON the doorbell carries, in bytes
  ARGV[8] contactsMax: the most members the reply lists; 0: list none (the caller knows them)
  ARGV[9] scheduledId: the scheduled message's id, '' for an ordinary message

  Returns {STATUS.NOT_FOUND} no such chat, {STATUS.NOT_MEMBER} (nothing is written), {STATUS.SENT_BEFORE, id} when
  the scheduled message was sent before as message `id` (nothing is written), else {id, sentAt, members, ring,
  user1, from1, to1, ...}: the new message; the members (comma-separated, for the sender's contacts) when asked and
  the chat has at most `contactsMax` of them, else ''; the ring when `bell` is '', else ''; and the gap entries this
  call claimed for delivery (claimed for `claimMs`; the caller delivers each and runs gapDelivered; if it dies first,
  a later send claims it again).
]]
--- @include lib/now
--- @include lib/trim-read
local meta, seq, version, members, messages, gaps = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local scheduled, scheduledAt = KEYS[7], KEYS[8]
local sender, text, backlog, history, bell = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local claimMs, doorbellMax, contactsMax, scheduledId = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9]
local HOUSEKEEPING = 16
if scheduledId ~= '' then
  local sent = redis.call('HGET', scheduled, scheduledId)
  if sent then
    return { STATUS.SENT_BEFORE, tonumber(sent) }
  end
end
if not redis.call('ZSCORE', members, sender) then
  if redis.call('EXISTS', meta) == 0 then
    return { STATUS.NOT_FOUND }
  end
  return { STATUS.NOT_MEMBER }
end
local now = nowMs()
local id = redis.call('INCR', seq)
local json = cjson.encode({ id = id, sender = sender, text = text, sentAt = now })
redis.call('ZADD', messages, id, json)
if scheduledId ~= '' then
  local SCHEDULED_MEMO_MS = 86400000
  local old = redis.call('ZRANGEBYSCORE', scheduledAt, '-inf', now - SCHEDULED_MEMO_MS, 'LIMIT', 0, 100)
  if #old > 0 then
    redis.call('HDEL', scheduled, unpack(old))
    redis.call('ZREM', scheduledAt, unpack(old))
  end
  redis.call('HSET', scheduled, scheduledId, id)
  redis.call('ZADD', scheduledAt, now, scheduledId)
end

local housekeeping = id % HOUSEKEEPING == 0
local floor = id - backlog
local pastBacklog = floor > 0
if pastBacklog then
  local moveTo = floor + math.floor(backlog / 10)
  local lagging = redis.call('ZRANGEBYSCORE', members, '-inf', '(' .. floor, 'WITHSCORES')
  for i = 1, #lagging, 2 do
    local user, read = lagging[i], tonumber(lagging[i + 1])
    local entry = redis.call('HGET', gaps, user)
    local from, claimed = read + 1, 0
    if entry then
      local f, _, c = string.match(entry, '^(%d+):(%d+):(%d+)$')
      from, claimed = tonumber(f), tonumber(c)
    end
    redis.call('HSET', gaps, user, from .. ':' .. moveTo .. ':' .. claimed)
    redis.call('ZADD', members, moveTo, user)
    housekeeping = true
  end
end
if housekeeping then
  trimRead(members, messages, id, history)
end

local memberList = ''
if contactsMax > 0 then
  local listed = redis.call('ZRANGE', members, 0, contactsMax)
  if #listed <= contactsMax then
    memberList = table.concat(listed, ',')
  end
end
local result = { id, now, memberList, '' }
if pastBacklog then
  local entries = redis.call('HGETALL', gaps)
  for i = 1, #entries, 2 do
    local from, to, claimed = string.match(entries[i + 1], '^(%d+):(%d+):(%d+)$')
    if tonumber(claimed) <= now then
      redis.call('HSET', gaps, entries[i], from .. ':' .. to .. ':' .. (now + claimMs))
      table.insert(result, entries[i])
      table.insert(result, tonumber(from))
      table.insert(result, tonumber(to))
    end
  end
end

local ring = version .. ' ' .. redis.call('INCR', version)
if #json <= doorbellMax then
  ring = ring .. ' ' .. json
end
if bell == '' then
  result[4] = ring
else
  redis.call('SPUBLISH', bell, ring)
end
return result
