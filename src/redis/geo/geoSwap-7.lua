-- geo-swap: put a finished import in place of the previous data, all at once. The old data is freed in the
-- background (UNLINK), and a kind the import did not load (say, no IPv6 file) ends up empty.
-- KEYS[1..3] live ranges4, ranges6, cities  KEYS[4..6] the same, loading  KEYS[7] generation (bumped)
-- Returns 1.
for i = 1, 3 do
  redis.call('UNLINK', KEYS[i])
  if redis.call('EXISTS', KEYS[i + 3]) == 1 then
    redis.call('RENAME', KEYS[i + 3], KEYS[i])
  end
end
redis.call('INCR', KEYS[7])
return 1
