-- POST a password sign-in per request, cycling through the users of $USERS_FILE ("email<TAB>password" lines).
-- $BODY_FORMAT=caravan sends {"email","password"} (GoTrue); pocketbase sends {"identity","password"}.
local bodies = {}
local format = os.getenv("BODY_FORMAT") or "caravan"
for line in io.lines(os.getenv("USERS_FILE")) do
    local email, password = line:match("([^\t]+)\t([^\t]+)")
    if format == "pocketbase" then
        bodies[#bodies + 1] = string.format('{"identity":"%s","password":"%s"}', email, password)
    else
        bodies[#bodies + 1] = string.format('{"email":"%s","password":"%s"}', email, password)
    end
end
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

request = function()
    i = i + 1
    return wrk.format(nil, nil, nil, bodies[(i % #bodies) + 1])
end
