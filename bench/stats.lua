-- Shared by the wrk scripts in this folder (loaded with `dofile`): counts the responses that
-- are not 2xx, keeps the first one as a sample, and at the end prints one line that
-- `run.sh` parses:
--   BENCH requests=N rps=R p50_ms=A p99_ms=B non2xx=E socket_errors=S
-- wrk runs every thread in its own Lua state: `setup` and `done` run in the main state,
-- `init`, `request` and `response` in each thread's.

local threads = {}

-- Main state: give each thread a number (1, 2, ...) that the scripts put in references.
function setup(thread)
    table.insert(threads, thread)
    thread:set("thread_id", #threads)
end

-- Thread state: per-thread counters, read back in `done` with thread:get.
non2xx = 0
first_error = ""

function response(status, headers, body)
    if status < 200 or status > 299 then
        non2xx = non2xx + 1
        if first_error == "" then
            first_error = tostring(status) .. " " .. string.sub(body or "", 1, 300)
        end
    end
end

function done(summary, latency, requests)
    local bad, sample = 0, ""
    for _, thread in ipairs(threads) do
        bad = bad + thread:get("non2xx")
        if sample == "" then
            sample = thread:get("first_error")
        end
    end
    local e = summary.errors
    local seconds = summary.duration / 1e6
    io.write(string.format(
        "BENCH requests=%d rps=%.1f p50_ms=%.2f p99_ms=%.2f non2xx=%d socket_errors=%d\n",
        summary.requests, summary.requests / seconds,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000,
        bad, e.connect + e.read + e.write + e.timeout))
    if sample ~= "" then
        io.write("BENCH first_error=" .. (string.gsub(sample, "%s+", " ")) .. "\n")
    end
end
