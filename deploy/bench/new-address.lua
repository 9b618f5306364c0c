-- wrk script for door.sh's ADDRESSES=each: every request comes from another
-- client address (cf-connecting-ip, believed from loopback, which door.sh
-- names a trusted proxy), as a public site's crowd does. The addresses walk
-- 10.0.0.0/8 from a per-thread offset, so none repeats within a run.
local n = 0
local base = math.random(0, 2^23)
request = function()
	n = n + 1
	local a = base + n
	local ip = string.format("10.%d.%d.%d", math.floor(a / 65536) % 256, math.floor(a / 256) % 256, a % 256)
	return wrk.format("GET", nil, { ["cf-connecting-ip"] = ip })
end
