-- KEYS[1] the task, KEYS[2] its caller's open tasks (a sorted set of task
-- keys scored by expiry in ms, "+inf" for none; a task leaves it when it
-- finishes, see update.lua, or expires).
-- ARGV[1] the record, ARGV[2] its expiry in ms ("0": none), ARGV[3] now
-- in ms, ARGV[4] the most open tasks one caller may hold.
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return 'FULL'
end
local ok
if ARGV[2] == '0' then
  ok = redis.call('SET', KEYS[1], ARGV[1], 'NX')
else
  ok = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PXAT', ARGV[2])
end
if not ok then
  return 'DUP'
end
local score = ARGV[2]
if score == '0' then
  score = '+inf'
end
redis.call('ZADD', KEYS[2], score, KEYS[1])
-- The set lives as long as its longest-lived task.
local top = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if top[2] == 'inf' then
  redis.call('PERSIST', KEYS[2])
else
  redis.call('PEXPIREAT', KEYS[2], top[2])
end
return 'OK'
