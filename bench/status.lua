-- GET /pay/api/payment/{id} for one session that run.sh created beforehand.
-- Arguments after `--`: the bearer token, the checkoutSessionId.
-- No request() function: wrk builds this one request once and repeats it.
dofile(os.getenv("BENCH_LUA_DIR") .. "/stats.lua")

function init(args)
    wrk.method = "GET"
    wrk.path = "/pay/api/payment/" .. args[2]
    wrk.headers["Authorization"] = "Bearer " .. args[1]
end
