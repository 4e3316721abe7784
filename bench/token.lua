-- POST /api/public/security/auth: OAuth 2.0 client credentials, a new token per request
-- (each one checks the client secret against its Argon2id hash).
-- Arguments after `--`: the client id, the client secret.
-- No request() function: wrk builds this one request once and repeats it.
dofile(os.getenv("BENCH_LUA_DIR") .. "/stats.lua")

function init(args)
    wrk.method = "POST"
    wrk.path = "/api/public/security/auth"
    wrk.headers["Content-Type"] = "application/json"
    wrk.body = string.format('{"client_id":"%s","client_secret":"%s"}', args[1], args[2])
end
