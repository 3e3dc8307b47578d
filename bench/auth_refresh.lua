-- Caravan refresh-token rotation under load: each thread keeps a queue of live refresh tokens (its share of
-- $TOKENS_FILE); a request takes one, its response puts the rotated child back. Every token is used once.
local threads = {}
local counter = 0

function setup(thread)
    thread:set("index", counter)
    counter = counter + 1
    threads[#threads + 1] = thread
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
    lost = 0
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
end

request = function()
    local token = queue[head]
    queue[head] = nil
    head = head + 1
    return wrk.format(nil, nil, nil, '{"refresh_token":"' .. token .. '"}')
end

response = function(status, headers, body)
    local token = body:match('"refresh_token":"([^"]+)"')
    if token then queue[#queue + 1] = token else lost = lost + 1 end
end
