-- wrk script: authenticated inserts into `favorites`, every request a new (user, place) pair.
--
--   wrk -t2 -c32 -d20s -s bench/write_favorites.lua URL -- MODE USERS_FILE PLACES_FILE SLOT NSLOTS
--
-- MODE        caravan     POST /rest/v1/favorites, apikey + "Authorization: Bearer <token>", {"user_id","place_id"}
--             pocketbase  POST /api/collections/favorites/records, "Authorization: <token>", {"user","place"}
-- USERS_FILE  one user a line: "<id>\t<token>"
-- PLACES_FILE one place id a line
-- SLOT        which share of the pairs this wrk invocation uses (0 = warm-up, 1 = run 1, 2 = run 2)
-- NSLOTS      how many invocations share the pairs
--
-- The U×P pairs are numbered i = place_index*U + user_index and cut into NSLOTS×threads disjoint ranges; thread t
-- of invocation SLOT walks its own range, so no pair is ever sent twice within a data dir (consecutive requests of
-- a thread cycle through the users). A thread that exhausts its range wraps around — the duplicates then fail the
-- UNIQUE constraint and show up as non-2xx responses, so exhaustion cannot go unnoticed. The anon key for the
-- caravan mode is read from the environment variable ANON_KEY.

local threads = {}
local next_id = 0

function setup(thread)
   thread:set("tid", next_id)
   next_id = next_id + 1
   table.insert(threads, thread)
end

local function lines(path)
   local out = {}
   for line in io.lines(path) do
      if #line > 0 then table.insert(out, line) end
   end
   return out
end

function init(args)
   mode = args[1]
   local slot, nslots = tonumber(args[4]), tonumber(args[5])
   users, headers = {}, {}
   for _, line in ipairs(lines(args[2])) do
      local id, token = line:match("^([^\t]+)\t(.+)$")
      table.insert(users, id)
      if mode == "caravan" then
         table.insert(headers, { ["apikey"] = os.getenv("ANON_KEY"), ["Authorization"] = "Bearer " .. token,
                                 ["Content-Type"] = "application/json" })
      else
         table.insert(headers, { ["Authorization"] = token, ["Content-Type"] = "application/json" })
      end
   end
   places = lines(args[3])
   nusers = #users
   local total = nusers * #places
   local nthreads = tonumber(os.getenv("WRK_THREADS") or "2")
   local per = math.floor(total / (nslots * nthreads))
   first = (slot * nthreads + tid) * per
   count = per
   sent = 0
   path = (mode == "caravan") and "/rest/v1/favorites" or "/api/collections/favorites/records"
end

function request()
   local i = first + (sent % count)
   sent = sent + 1
   local u = i % nusers
   local p = math.floor(i / nusers)
   local body
   if mode == "caravan" then
      body = '{"user_id":"' .. users[u + 1] .. '","place_id":"' .. places[p + 1] .. '"}'
   else
      body = '{"user":"' .. users[u + 1] .. '","place":"' .. places[p + 1] .. '"}'
   end
   return wrk.format("POST", path, headers[u + 1], body)
end

function done(summary, latency, requests)
   local parts = {}
   for _, t in ipairs(threads) do
      table.insert(parts, string.format("thread %d: %d requests generated of a range of %d", t:get("tid"), t:get("sent"), t:get("count")))
   end
   io.write("pairs: " .. table.concat(parts, "; ") .. "\n")
end
