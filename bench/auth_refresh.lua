-- Caravan refresh-token rotations under load: each thread takes its share of $TOKENS_FILE (one live refresh token a
-- line, from distinct sessions) and presents each token exactly once. When a thread runs out it sends an unknown
-- token, which is refused (400) and shows as non-2xx: size the file for the run.
local counter = 0

function setup(thread)
    thread:set("index", counter)
    counter = counter + 1
end

function init(args)
    queue = {}
    local n = 0
    local count = tonumber(os.getenv("THREADS") or "2")
    for line in io.lines(os.getenv("TOKENS_FILE")) do
        if n % count == index then queue[#queue + 1] = line end
        n = n + 1
    end
    head = 1
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
end

request = function()
    local token = queue[head] or "exhausted"
    head = head + 1
    return wrk.format(nil, nil, nil, '{"refresh_token":"' .. token .. '"}')
end
