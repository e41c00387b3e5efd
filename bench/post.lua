-- wrk script for the content_service benchmark: POST the design file named
-- by BENCH_BODY with the bearer token; report non-2xx answers at the end.
--
-- Every request carries a different body (as bench/load does): the design
-- followed by 16 bytes of JSON whitespace spelling the wrk thread and a
-- counter, so no cache or shared call answers it. BENCH_SAME_BODY=1 sends
-- the design itself every time (to measure caching or sharing).
local f = assert(io.open(os.getenv("BENCH_BODY"), "rb"))
local design = f:read("*a")
f:close()
local same = os.getenv("BENCH_SAME_BODY") == "1"
wrk.method = "POST"
wrk.body = design
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_TOKEN") or "bench-token")

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

local ws = { " ", "\t", "\n", "\r" }
local count = 0
function request()
  if same then
    return wrk.format()
  end
  count = count + 1
  -- 8 characters of thread id, 8 of counter, 2 bits each.
  local n = (id or 0) * 65536 + (count % 65536)
  local tail = {}
  for i = 1, 16 do
    tail[i] = ws[(n % 4) + 1]
    n = math.floor(n / 4)
  end
  return wrk.format(nil, nil, nil, design .. table.concat(tail))
end

function done(summary, latency, requests)
  io.write(string.format("non2xx=%d socket_errors=%d\n", summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
