-- Reentrant locks (Redisson's lock: a holder and a count, with a lease), shared by the coordination domain's
-- reentrant locks and the documents' editing leases. A lock is one string key expiring with the lease:
--   "<owner> <token> <depth> <fence>", with lib/lock's WAITED appended once someone waits for it, as the plain lock
-- (owners and tokens have no spaces and no '+'). One string rather than a hash: the doorbell poller reads a
-- watched head with GET, so the lock's own key is the head its waiters watch, and every move of it (a new holder,
-- a release, an expiry) is one they see. `fence` is the holder's fencing token, taken from a counter when the
-- holder changes (or, for the coordination domain's locks, when the holder first asks: 0 until then) and kept while
-- the same owner re-enters. A free lock is also taken without a script, by SET NX PX of "<owner> <token> 1 0".
--- @include lib/lock

-- The state a lock's value says.
local function reentrantParse(value)
  local owner, token, depth, fence, mark = string.match(value, '^(%S+) (%S+) (%d+) (%d+)(%+?)$')
  return { owner = owner, token = token, depth = tonumber(depth), fence = fence, waited = mark ~= '' }
end

-- The lock's state, or nil when it is free.
local function reentrantRead(lock)
  local value = redis.call('GET', lock)
  if not value then
    return nil
  end
  return reentrantParse(value)
end

-- Writes `held` with a lease of `leaseMs` from now, or (leaseMs nil) keeping the lease it has.
local function reentrantWrite(lock, held, leaseMs)
  local value = held.owner .. ' ' .. held.token .. ' ' .. held.depth .. ' ' .. held.fence
  if held.waited then
    value = value .. WAITED
  end
  if leaseMs then
    redis.call('SET', lock, value, 'PX', leaseMs)
  else
    redis.call('SET', lock, value, 'KEEPTTL')
  end
end

-- The lock's state when `token` holds it, else nil.
local function reentrantHeldBy(lock, token)
  local held = reentrantRead(lock)
  if held and held.token == token then
    return held
  end
  return nil
end

-- Takes the lock for `owner`, or enters it once more when `owner` holds it already (its lease then ends `leaseMs`
-- from now unless it ended later: a re-entry never shortens it). A new holder gets `token` and the next `fence`
-- from the counter `fences` (with `fences` false, fence 0: drawn when it asks, reentrantFence); `others` ('1':
-- this process has other waiters) marks it waited for. Refused, a caller that `waits` ('1') marks it, so that its
-- release rings the doorbell.
-- Returns {1, fence, token, depth, ms left on the lease} when held, else {0, ms left on the holder's lease, holder}.
local function reentrantAcquire(lock, fences, owner, token, leaseMs, waits, others)
  local held = reentrantRead(lock)
  if not held then
    local fence = fences and redis.call('INCR', fences) or 0
    held = { owner = owner, token = token, depth = 1, fence = fence, waited = others == '1' }
    reentrantWrite(lock, held, leaseMs)
    return { 1, held.fence, held.token, 1, tonumber(leaseMs) }
  end
  local left = math.max(redis.call('PTTL', lock), 1)
  if held.owner == owner then
    held.depth = held.depth + 1
    if left < tonumber(leaseMs) then
      left = tonumber(leaseMs)
      reentrantWrite(lock, held, leaseMs)
    else
      reentrantWrite(lock, held, nil)
    end
    return { 1, tonumber(held.fence), held.token, held.depth, left }
  end
  if waits == '1' and not held.waited then
    held.waited = true
    reentrantWrite(lock, held, nil)
  end
  return { 0, left, held.owner }
end

-- Frees the lock whatever its depth, ringing `bell` if someone waits for it.
local function reentrantFree(lock, held, bell)
  redis.call('DEL', lock)
  if held.waited then
    redis.call('SPUBLISH', bell, lock .. ' free:' .. held.token)
  end
end

-- Leaves the lock once when `token` holds it: one level less, free at depth 0 (then the doorbell `bell` rings if
-- someone waits: "<lock> free:<token>", a value no GET returns).
-- Returns the depth left (0: free), or -1 when `token` does not hold it (nothing written).
local function reentrantRelease(lock, token, bell)
  local value = redis.call('GET', lock)
  -- The token and the depth only: the usual last release (depth 1) parses no more of it.
  local holder, depth = string.match(value or '', '^%S+ (%S+) (%d+) ')
  if holder ~= token then
    return -1
  end
  if depth ~= '1' then
    local held = reentrantParse(value)
    held.depth = held.depth - 1
    reentrantWrite(lock, held, nil)
    return held.depth
  end
  reentrantFree(lock, { token = token, waited = waitedFor(value) }, bell)
  return 0
end

-- Gives the lease `token` holds `leaseMs` from now. Returns its state, or nil when `token` does not hold it.
local function reentrantExtend(lock, token, leaseMs)
  local held = reentrantHeldBy(lock, token)
  if held then
    redis.call('PEXPIRE', lock, leaseMs)
  end
  return held
end

-- The fencing token of the holder `token`, drawn from the counter `fences` the first time it asks and kept until the
-- holder changes. Returns it (> 0), or 0 when `token` does not hold the lock (nothing written).
local function reentrantFence(lock, fences, token)
  local held = reentrantHeldBy(lock, token)
  if not held then
    return 0
  end
  if held.fence == '0' then
    held.fence = redis.call('INCR', fences)
    reentrantWrite(lock, held, nil)
  end
  return tonumber(held.fence)
end

-- Whether a write that shows lease token `token` ('' for none) may go on under the lock: when the lock is free and
-- no token is shown, or when `token` holds it. A token of a lease that ended (expired, released) never may.
local function reentrantAdmits(lock, token)
  local held = reentrantRead(lock)
  if held then
    return held.token == token
  end
  return token == ''
end
