-- KEYS[1] the task, KEYS[2] its caller's open tasks (a sorted set of task
-- keys scored by expiry in ms), KEYS[3] its caller's finished tasks
-- (scored by when they finished, in ms), KEYS[4] the answers its caller's
-- tasks hold (a hash: task key -> bytes).
-- ARGV[1] the SHA-1 of the record as the update read it, ARGV[2] the
-- record to write, ARGV[3] "1" when the write finishes the task, ARGV[4]
-- the task's expiry in ms ("0": none), ARGV[5] now in ms, ARGV[6] the most
-- finished tasks kept per caller, ARGV[7] the bytes of answers the task
-- holds after the write, ARGV[8] "1" when that is more than before,
-- ARGV[9] the most bytes of answers per caller.
local cur = redis.call('GET', KEYS[1])
if not cur then
  return 'GONE'
end
if redis.sha1hex(cur) ~= ARGV[1] then
  return 'RETRY' -- another instance wrote the task since it was read
end

-- A key that outlives the tasks in it only while one of them lives:
-- expiry ARGV[4] or later, or none when a task in it has none.
local function keepFor(key, existed)
  if ARGV[4] == '0' then
    redis.call('PERSIST', key)
    return
  end
  local t = redis.call('PEXPIRETIME', key)
  if existed == 0 or (t >= 0 and t < tonumber(ARGV[4])) then
    redis.call('PEXPIREAT', key, ARGV[4])
  end
end

local bytes = tonumber(ARGV[7])
if ARGV[8] == '1' then
  local total = bytes
  local held = redis.call('HGETALL', KEYS[4])
  for i = 1, #held, 2 do
    if held[i] ~= KEYS[1] then
      if redis.call('EXISTS', held[i]) == 1 then
        total = total + tonumber(held[i + 1])
      else
        redis.call('HDEL', KEYS[4], held[i]) -- expired with its answers
      end
    end
  end
  if total > tonumber(ARGV[9]) then
    return 'ANSWERS'
  end
end

redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
if bytes > 0 then
  local existed = redis.call('EXISTS', KEYS[4])
  redis.call('HSET', KEYS[4], KEYS[1], bytes)
  keepFor(KEYS[4], existed)
else
  redis.call('HDEL', KEYS[4], KEYS[1])
end

if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[2], KEYS[1])
  local existed = redis.call('EXISTS', KEYS[3])
  redis.call('ZADD', KEYS[3], ARGV[5], KEYS[1])
  keepFor(KEYS[3], existed)
  local max = tonumber(ARGV[6])
  if redis.call('ZCARD', KEYS[3]) > max then
    -- Entries of tasks Redis has expired go first; then the tasks that
    -- finished longest ago are forgotten.
    for _, k in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
      if redis.call('EXISTS', k) == 0 then
        redis.call('ZREM', KEYS[3], k)
      end
    end
    while redis.call('ZCARD', KEYS[3]) > max do
      local k = redis.call('ZPOPMIN', KEYS[3])[1]
      redis.call('DEL', k)
    end
  end
end
return 'OK'
