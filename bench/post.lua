-- wrk script for the content_service benchmark: POST the design file named
-- by BENCH_BODY with the bearer token; report non-2xx answers at the end.
local f = assert(io.open(os.getenv("BENCH_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_TOKEN") or "bench-token")

function done(summary, latency, requests)
  io.write(string.format("non2xx=%d socket_errors=%d\n", summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
