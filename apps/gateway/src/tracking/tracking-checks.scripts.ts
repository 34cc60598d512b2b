/**
 * The tracking routes' one Redis script, run before a tracking event is published: the client
 * address's bucket (GCRA, as the rate limiter's scripts: limit per window, refilled evenly,
 * Redis's clock) and the once-only claim of the (recommendation, kind).
 * KEYS[1] the address's bucket, KEYS[2] the event's claim key.
 * ARGV[1] limit per window (0: none), ARGV[2] window ms, ARGV[3] how long a new claim is kept, ms.
 * Returns 0 admitted (the claim is now held: publish), 1 the address is over its limit (nothing
 * counted or claimed), 2 the event was already claimed (recorded, or being recorded).
 * Every request under the limit counts against the address, a repeat of a recorded link too.
 */
export const ADMIT_SCRIPT = `
local limit = tonumber(ARGV[1])
if limit > 0 then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
  local window = tonumber(ARGV[2])
  local interval = window / limit
  local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
  if tat < now then tat = now end
  if tat + interval - now > window then return 1 end
  local next_tat = tat + interval
  redis.call('SET', KEYS[1], string.format('%.3f', next_tat), 'PX', math.ceil(next_tat - now))
end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[3]) then return 0 end
return 2
`;
