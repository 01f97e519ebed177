--[[
  joinChat: add a member to a chat at the chat's current last message id (also when there is none yet): a user
  joining a public chat, or a member adding someone. Refuses a chat that does not exist, an adder who is not a
  member, a user joining a chat that is not public, and a chat that has its most members.

  KEYS[1] meta: hash, the chat's public (0/1), createdAt, createdBy
  KEYS[2] seq: string counter, the chat's last message id
  KEYS[3] version: string counter, the chat's version, bumped by the join
  KEYS[4] members: sorted set, member → read position
  KEYS[5] names: sorted set, every score 0: member names
  ARGV[1] user: the username joining
  ARGV[2] by: the member adding them, '' when the user joins
  ARGV[3] bell: the chat's doorbell channel
  ARGV[4] maxMembers: the most members a chat has

  Returns {0, last} when already a member, {1, last} when added; else {STATUS.NOT_FOUND} no such chat,
  {STATUS.NOT_MEMBER} the adder is not a member, {STATUS.NOT_PUBLIC}, {STATUS.FULL} (nothing is written).
]]
local meta, seq, version, members, names = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local user, by, bell, maxMembers = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
if redis.call('EXISTS', meta) == 0 then
  return { STATUS.NOT_FOUND }
end
if by ~= '' then
  if not redis.call('ZSCORE', members, by) then
    return { STATUS.NOT_MEMBER }
  end
elseif redis.call('HGET', meta, 'public') ~= '1' then
  return { STATUS.NOT_PUBLIC }
end
local last = tonumber(redis.call('GET', seq) or '0')
if redis.call('ZSCORE', members, user) then
  return { 0, last }
end
if redis.call('ZCARD', members) >= maxMembers then
  return { STATUS.FULL }
end
redis.call('ZADD', members, last, user)
redis.call('ZADD', names, 0, user)
redis.call('SPUBLISH', bell, version .. ' ' .. redis.call('INCR', version))
return { 1, last }
