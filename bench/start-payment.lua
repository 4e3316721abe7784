-- POST /pay/api/start-payment, each request with its own transactionReferenceNumber
-- (prefix - random run id - thread number - counter), so that none is refused as a duplicate
-- (SVC_001), not even against an earlier wrk run with the same prefix (the warm-up).
-- The body is the README walk-through's: one line item, USD 25.50, three callbacks.
-- Arguments after `--`: the bearer token, a prefix unique to the run.
dofile(os.getenv("BENCH_LUA_DIR") .. "/stats.lua")

local body_template = [[{"callbackSuccessUrl":"https://merchant.example/ok",]]
    .. [["callbackFailUrl":"https://merchant.example/fail",]]
    .. [["callbackBackUrl":"https://merchant.example/cart",]]
    .. [["totalTransactionAmount":25.50,"currencyCode":"USD",]]
    .. [["transactionReferenceNumber":"%s","generalPurchaseDescription":"Order %s",]]
    .. [["items":[{"itemCode":"SKU-1","quantity":1,"description":"Blue mug",]]
    .. [["amount":25.50,"currencyCode":"USD"}]}]]

-- Main state: 8 random hex digits for this wrk run, set as the global `run_id` of every
-- thread's state (like stats.lua's `thread_id`).
local this_run
local stats_setup = setup
function setup(thread)
    if not this_run then
        local f = assert(io.open("/dev/urandom", "rb"))
        this_run = string.gsub(f:read(4), ".", function(c)
            return string.format("%02x", string.byte(c))
        end)
        f:close()
    end
    thread:set("run_id", this_run)
    stats_setup(thread)
end

local token, prefix
local counter = 0

function init(args)
    token = args[1]
    prefix = args[2]
end

function request()
    counter = counter + 1
    local ref = string.format("%s-%s-%d-%d", prefix, run_id, thread_id, counter)
    return wrk.format("POST", "/pay/api/start-payment", {
        ["Authorization"] = "Bearer " .. token,
        ["Content-Type"] = "application/json",
        ["X-idoperacion"] = "op-" .. ref,
    }, string.format(body_template, ref, ref))
end
