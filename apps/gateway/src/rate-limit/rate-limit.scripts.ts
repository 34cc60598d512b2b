/**
 * The limiter's Redis scripts: GCRA (the generic cell rate algorithm, a token bucket kept as a
 * single timestamp per key). A bucket of `limit` per `window` ms stores its "theoretical
 * arrival time" (TAT); a request is allowed when TAT + interval − now ≤ window, where interval
 * = window / limit, and then moves TAT on by one interval. So `limit` requests pass at once,
 * and one more every interval after that; the key expires when the bucket is full again.
 * Time is Redis's own (TIME), so every gateway replica shares one clock. Each script is one
 * atomic round trip (EVALSHA).
 */

/**
 * What every script starts with: Redis's time `now` (ms), the bucket's `window` and `interval`
 * (ARGV[1] limit, ARGV[2] window ms), its TAT (0 when the key is gone: the bucket is full),
 * and `store`, which keeps a new TAT until the bucket is full again.
 */
const GCRA_STATE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local window = tonumber(ARGV[2])
local interval = window / tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local function store(next_tat)
  redis.call('SET', KEYS[1], string.format('%.3f', next_tat), 'PX', math.ceil(next_tat - now))
end
`;

/**
 * A request by an authenticated principal: takes tokens from its bucket.
 * KEYS[1] the principal's bucket. ARGV[1] limit (> 0), ARGV[2] window ms, ARGV[3] tokens wanted
 * (a lease: the gateway serves the next requests of this principal from it without asking
 * again; 1 when limits are small).
 * Returns {code, remaining, retry_ms, reset_ms, granted}: code 0 allowed (granted ≥ 1 tokens,
 * at most the ones wanted and the ones in the bucket), 1 over the limit (nothing taken).
 */
export const CONSUME_SCRIPT = `${GCRA_STATE}if tat < now then tat = now end
local over = tat + interval - now - window
if over > 0 then return {1, 0, math.ceil(over), math.ceil(tat - now), 0} end
local room = math.floor((window - (tat - now)) / interval + 1e-9)
local granted = math.max(1, math.min(tonumber(ARGV[3]), room))
local next_tat = tat + granted * interval
store(next_tat)
return {0, math.floor((window - (next_tat - now)) / interval), 0, math.ceil(next_tat - now), granted}
`;

/**
 * A failed authentication from a client address (an IPv6 one by its prefix).
 * KEYS[1] the address's failure bucket. ARGV[1] failure limit, ARGV[2] window ms.
 * Returns {code, blocked_ms}: code 0 the failure was counted, 1 the address was already
 * blocked (not counted: a blocked address does not extend its own block); blocked_ms how long
 * the address is refused from now on (0: it is not).
 */
export const FAILURE_SCRIPT = `${GCRA_STATE}if tat < now then tat = now end
local next_tat = tat + interval
local over = next_tat - now - window
if over > 0 then return {1, math.ceil(over)} end
store(next_tat)
local blocked = next_tat + interval - now - window
if blocked > 0 then return {0, math.ceil(blocked)} end
return {0, 0}
`;

/**
 * Tokens a replica took for a lease and did not use, given back to the principal's bucket.
 * KEYS[1] the principal's bucket. ARGV[1] limit, ARGV[2] window ms, ARGV[3] tokens returned.
 * Moves the TAT back by that many intervals, never before now (a bucket is never fuller than
 * full); the key goes when the bucket is full. Returns the tokens the bucket holds afterwards.
 */
export const RETURN_SCRIPT = `${GCRA_STATE}if tat <= now then return math.floor(window / interval) end
local next_tat = math.max(now, tat - tonumber(ARGV[3]) * interval)
if next_tat <= now then
  redis.call('DEL', KEYS[1])
else
  store(next_tat)
end
return math.floor((window - (next_tat - now)) / interval)
`;
