-- GET /pay/api/payment/{id}, each request for a session drawn at random from a file of ids
-- (one per line) that run.sh wrote beforehand, as merchants poll many sessions at once.
-- Arguments after `--`: the bearer token, the file of checkoutSessionIds.
-- The requests are built once in init(); request() only picks one.
dofile(os.getenv("BENCH_LUA_DIR") .. "/stats.lua")

local requests = {}

function init(args)
    local headers = { ["Authorization"] = "Bearer " .. args[1] }
    for id in io.lines(args[2]) do
        requests[#requests + 1] = wrk.format("GET", "/pay/api/payment/" .. id, headers)
    end
    assert(#requests > 0, "no session ids in " .. args[2])
    math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16))
end

function request()
    return requests[math.random(#requests)]
end
