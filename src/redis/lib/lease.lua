-- Documents' editing leases (reentrant locks of lib/reentrant.lua in the document's shard): the checks of a step
-- by the lease's holder.
--- @include lib/reentrant

-- The lease's state when `token` is its live token and `user` its holder; else the refusal: STATUS.NOT_FOUND (no
-- document), STATUS.LEASED (the token is not the live lease's: it expired or was released) or STATUS.NOT_OWNER
-- (another user's lease).
local function leaseOfHolder(lease, doc, user, token)
  if redis.call('EXISTS', doc) == 0 then
    return nil, STATUS.NOT_FOUND
  end
  local held = reentrantHeldBy(lease, token)
  if not held then
    return nil, STATUS.LEASED
  end
  if held.owner ~= user then
    return nil, STATUS.NOT_OWNER
  end
  return held
end
