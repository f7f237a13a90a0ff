-- wrk script: every connection behaves like an LL-HLS viewer at the live edge of /stream.m3u8 (RFC 8216bis §6.2.5.2):
-- it asks for the playlist with a blocking reload of the part after the newest it knows (the preload hint), and for
-- each playlist it gets back it fetches the newest listed part once. Non-2xx answers are counted by wrk.
--   wrk -t1 -c500 -d60s --timeout 10s -s scripts/lib/ll-viewers.lua http://EDGE/
-- The playlist path can be changed with: -- /cam1/stream.m3u8
local playlist = "/stream.m3u8"
local base = "/"
local queue = {}
local msn, part = nil, nil
local playlists, parts = 0, 0

function init(args)
  if args[1] then
    playlist = args[1]
    base = playlist:match("^(.*/)")
  end
end

function request()
  local n = #queue
  if n > 0 then
    local uri = queue[n]
    queue[n] = nil
    parts = parts + 1
    return wrk.format("GET", base .. uri)
  end
  playlists = playlists + 1
  if msn then
    return wrk.format("GET", playlist .. "?_HLS_msn=" .. msn .. "&_HLS_part=" .. part)
  end
  return wrk.format("GET", playlist)
end

function response(status, headers, body)
  if status ~= 200 or not body or body:sub(1, 7) ~= "#EXTM3U" then return end
  local last
  for uri in body:gmatch('#EXT%-X%-PART:[^\n]-URI="([^"]+)"') do last = uri end
  if last then queue[#queue + 1] = last end
  local m, p = body:match('#EXT%-X%-PRELOAD%-HINT:TYPE=PART,URI="[^"]-seg(%d+)%.(%d+)%.m4s"')
  if m then
    local nm, np = tonumber(m), tonumber(p)
    if not msn or nm > msn or (nm == msn and np > part) then msn, part = nm, np end
  end
end
