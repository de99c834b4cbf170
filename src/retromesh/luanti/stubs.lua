-- retromesh: the engine as a mod's registration code sees it, fenced.
--
-- This chunk is trusted: it runs with the Lua state's own globals (io, os, debug...) and is
-- handed the host's callables (sandbox_child.py). The mods run in ENV, built here: no `io`
-- but a read-only `io.open` inside the mod folders, `os` reduced to time/clock/date, no
-- `require`, `debug`, bytecode loading or Python object; dofile/loadfile only inside the mod
-- folders. A count hook stops a mod past its time (with the JIT off, compiled loops cannot
-- skip it), the mod's own pcall/xpcall/coroutine.resume re-raise the time and memory limits;
-- the OS limits of the child process are the fence behind these.
--
-- What the mods register is sent to the host as JSON lines ({"t": "reg", ...}), functions
-- dropped, as soon as it is registered: what ran before a failure is kept.

local host_read, host_list, host_emit, host_now, timeout, world = ...

local type, next, pairs, ipairs, select, tostring, tonumber = type, next, pairs, ipairs, select, tostring, tonumber
local error, pcall, xpcall, setmetatable, getmetatable = error, pcall, xpcall, setmetatable, getmetatable
local rawget, rawset, rawequal, unpack, setfenv, getfenv = rawget, rawset, rawequal, unpack, setfenv, getfenv
local loadstring, collectgarbage = loadstring, collectgarbage
local string, table, math, os, coroutine = string, table, math, os, coroutine
local getinfo, sethook = debug.getinfo, debug.sethook
local sformat, sbyte, ssub, sfind, sgsub, smatch = string.format, string.byte, string.sub, string.find, string.gsub, string.match
local tconcat, floor, huge, clock = table.concat, math.floor, math.huge, os.clock
local REAL_G = _G

-- every string's metatable reaches this table: no bytecode out of any function
string.dump = nil
if jit then jit.off(); jit.flush() end

---------------------------------------------------------------------------------------------
-- JSON out (the host parses it; strings are bytes, decoded there)

local escapes = {['"'] = '\\"', ['\\'] = '\\\\', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t'}
local function jstr(s)
	return '"' .. sgsub(s, '[%c"\\]', function(c)
		return escapes[c] or sformat('\\u%04x', sbyte(c))
	end) .. '"'
end

local function jnum(v)
	if v ~= v or v == huge or v == -huge then return "null" end
	if v == floor(v) and v > -2^53 and v < 2^53 then return sformat("%d", v) end
	local short = sformat("%.14g", v)
	if tonumber(short) == v then return short end
	return sformat("%.17g", v)
end

-- the fields read first (a definition is cut at a budget; these come before the rest)
local FIRST = {"mesh", "visual", "textures", "visual_size", "animation", "animations",
	"animation_speed", "initial_properties", "child_texture", "gotten_texture", "rotate",
	"male_textures", "female_textures", "child_textures", "meshes", "mesh_textures",
	"gotten_mesh", "texture_list", "description"}

local encode
local function encode_table(t, out, depth, seen, budget, first)
	local count, maxn = 0, 0
	for k in next, t do
		count = count + 1
		if type(k) == "number" and k >= 1 and k == floor(k) then
			if k > maxn then maxn = k end
		else
			maxn = -1
		end
	end
	if count == 0 then out[#out + 1] = "[]"; return end
	seen[t] = true
	if maxn == count then
		out[#out + 1] = "["
		for i = 1, count do
			if i > 1 then out[#out + 1] = "," end
			encode(rawget(t, i), out, depth + 1, seen, budget)
		end
		out[#out + 1] = "]"
	else
		out[#out + 1] = "{"
		local n, done = 0, {}
		local function field(k, v)
			local tk = type(k)
			if (tk ~= "string" and tk ~= "number") or done[k] then return end
			local tv = type(v)
			if tv == "function" or tv == "userdata" or tv == "thread" then return end
			done[k] = true
			if n > 0 then out[#out + 1] = "," end
			n = n + 1
			out[#out + 1] = jstr(tostring(k)) .. ":"
			encode(v, out, depth + 1, seen, budget)
		end
		if first then
			for _, k in ipairs(first) do
				local v = rawget(t, k)
				if v ~= nil then field(k, v) end
			end
		end
		for k, v in next, t do field(k, v) end
		out[#out + 1] = "}"
	end
	seen[t] = nil
end

encode = function(v, out, depth, seen, budget, first)
	local t = type(v)
	budget.n = budget.n - 1
	if t == "string" and #v <= budget.bytes then
		budget.bytes = budget.bytes - #v
		out[#out + 1] = jstr(v)
	elseif t == "number" then out[#out + 1] = jnum(v)
	elseif t == "boolean" then out[#out + 1] = v and "true" or "false"
	elseif t == "table" and depth < 10 and not seen[v] and budget.n > 0 then
		encode_table(v, out, depth, seen, budget, first)
	else out[#out + 1] = "null" end
end

local function json(v, first)
	local out = {}
	-- a definition is cut at 20000 values and 4 MiB of strings: the host's memory is not the mod's
	encode(v, out, 0, {}, {n = 20000, bytes = 4 * 2^20}, first)
	return tconcat(out)
end

local function emit(fields)
	local out = {}
	for k, v in pairs(fields) do out[#out + 1] = jstr(k) .. ":" .. (k == "def" and v or json(v)) end
	host_emit("{" .. tconcat(out, ",") .. "}")
end

---------------------------------------------------------------------------------------------
-- where: the innermost mod frame, "<mod>/<file>:<line>"

local current_mod = ""
local MODS = {}        -- name -> folder (real path, from the host)

local function where_from(level)
	local fallback = ""
	for l = level, level + 60 do
		local info = getinfo(l, "Sl")
		if not info then break end
		local src = info.source
		if ssub(src, 1, 1) == "@" and (info.currentline or 0) > 0 then
			local here = ssub(src, 2) .. ":" .. info.currentline
			if ssub(src, 2, #current_mod + 2) == current_mod .. "/" then return here end
			if fallback == "" then fallback = here end
		end
	end
	return fallback
end

---------------------------------------------------------------------------------------------
-- limits: time (count hook, per mod, on the wall's clock) and memory (the allocator's error); the mod's own
-- pcall cannot swallow either

local deadline = huge
local expired, out_of_memory, expired_where = false, false, nil
local TIMEOUT = setmetatable({}, {__tostring = function() return "time limit" end})
local NOMEMORY = setmetatable({}, {__tostring = function() return "not enough memory" end})

sethook(function()
	if host_now() > deadline then
		if not expired then expired = true; expired_where = where_from(2) end
		error(TIMEOUT, 0)
	end
end, "", 10000)

local function fatal_again(ok, ...)
	if not ok then
		local err = ...
		if err == "not enough memory" or err == NOMEMORY then out_of_memory = true end
		if expired then error(TIMEOUT, 0) end
		if out_of_memory then error(NOMEMORY, 0) end
	end
	return ok, ...
end

---------------------------------------------------------------------------------------------
-- no-op values: unknown engine calls run on

local NOOP = {}
local function noop() return NOOP end
local function zero() return 0 end
setmetatable(NOOP, {
	__call = noop, __index = noop, __newindex = function() end,
	__tostring = function() return "" end, __len = zero, __unm = zero,
	__add = zero, __sub = zero, __mul = zero, __div = zero, __mod = zero, __pow = zero,
	__concat = function(a, b)
		local ta, tb = type(a), type(b)
		return ((ta == "string" or ta == "number") and a or "") .. ((tb == "string" or tb == "number") and b or "")
	end,
	__lt = function() return false end, __le = function() return false end,
})

local function with_noops(t)
	return setmetatable(t, {__index = noop})
end

---------------------------------------------------------------------------------------------
-- the mods' environment

local ENV = {}
local function copy(t)
	local c = {}
	for k, v in next, t do c[k] = v end
	return c
end

for _, name in ipairs({"assert", "error", "ipairs", "next", "pairs", "rawequal", "rawget",
		"rawset", "select", "setmetatable", "getmetatable", "tonumber", "tostring", "type",
		"unpack", "gcinfo", "newproxy"}) do
	ENV[name] = REAL_G[name]
end
ENV._VERSION = _VERSION
ENV.string = string
ENV.table = copy(table)
ENV.math = copy(math)
if REAL_G.bit then ENV.bit = copy(REAL_G.bit) end
-- what is left out says so when called, naming the mod line
local function refusing(lib, t)
	return setmetatable(t, {__index = function(_, k)
		error(lib .. "." .. tostring(k) .. " refused: mods' Lua runs without it", 2)
	end})
end
ENV.os = refusing("os", {time = os.time, clock = os.clock, difftime = os.difftime,
	-- only the conversions every C library knows (an unknown one is undefined behaviour in C)
	date = function(fmt, t)
		if type(fmt) == "string" then fmt = sgsub(fmt, "%%(.?)", function(c)
			return sfind("aAbBcdHIjmMpSUwWxXyYZ%", c, 1, true) and c ~= "" and "%" .. c or ""
		end) end
		return os.date(fmt, t)
	end,
	getenv = function() return nil end})
setmetatable(string, {__index = function(_, k)
	if k == "dump" then error("string.dump refused: mods' Lua loads no bytecode", 2) end
end})
ENV._G = ENV
ENV.print = function() end
ENV.collectgarbage = function(opt)
	if opt == "count" then return collectgarbage("count") end
	return 0
end
ENV.require = function(name)
	error("require('" .. tostring(name) .. "') refused: mods' Lua runs without require", 2)
end

ENV.pcall = function(f, ...) return fatal_again(pcall(f, ...)) end
ENV.xpcall = function(f, h, ...) return fatal_again(xpcall(f, h, ...)) end
local co = copy(coroutine)
co.resume = function(c, ...) return fatal_again(coroutine.resume(c, ...)) end
ENV.coroutine = co

-- the engine's environment is the mods' one: never hand out the trusted globals
ENV.getfenv = function(f)
	if f == nil then f = 1 end
	if type(f) == "number" then
		if f == 0 then return ENV end
		f = f + 1
	end
	local ok, env = pcall(getfenv, f)
	if not ok then error(env, 2) end
	if env == REAL_G then return ENV end
	return env
end
ENV.setfenv = function(f, t)
	if type(f) == "number" then
		if f == 0 then error("setfenv(0) refused", 2) end
		f = f + 1
	end
	local ok, env = pcall(getfenv, f)
	if not ok or env == REAL_G then error("setfenv refused on an engine function", 2) end
	return setfenv(f, t)
end

---------------------------------------------------------------------------------------------
-- files: only inside the mod folders (the host checks, resolving links)

local function absolute(path)
	if type(path) ~= "string" then return nil end
	if ssub(path, 1, 1) == "/" or smatch(path, "^%a:[/\\]") then return path end
	return (MODS[current_mod] or "") .. "/" .. path
end

local function in_world(path)
	return ssub(path, 1, #world) == world
end

-- a function of the mods' environment, or nil, message, refused (refused: raise it)
local function compile(text, chunkname)
	if type(text) ~= "string" then return nil, "load: expected a string", true end
	if sbyte(text, 1) == 27 then return nil, "bytecode refused: mods' Lua loads text only", true end
	local f, err = loadstring(text, chunkname)
	if not f then return nil, err end
	setfenv(f, ENV)
	return f
end

local function load_mod_file(path, how)
	local abs = absolute(path)
	if not abs then return nil, how .. ": expected a file name", true end
	local text, chunk, refused = host_read(abs)
	if not text then return nil, chunk, refused end
	local f, err, bad = compile(text, chunk)
	return f, err, bad
end

-- where the error a mod file raised was, seen where it was raised (an error without a
-- position, the memory limit): a failure is reported from there
local raised = {err = nil, where = ""}
local function note_where(err)
	if err == "not enough memory" then out_of_memory = true end
	if raised.err ~= err then raised.err, raised.where = err, where_from(2) end
	return err
end

local function run_file(f, chunk)
	emit({t = "file", file = ssub(chunk, 2)})
	local res = {xpcall(f, note_where)}
	emit({t = "left"})
	if not res[1] then error(res[2], 0) end
	return unpack(res, 2, table.maxn(res))
end

ENV.dofile = function(path)
	local f, err = load_mod_file(path, "dofile")
	if not f then error(err, 2) end
	local info = getinfo(f, "S")
	return run_file(f, info.source)
end
ENV.loadfile = function(path)
	local f, err, refused = load_mod_file(path, "loadfile")
	if refused then error(err, 2) end
	return f, err
end
ENV.loadstring = function(text, chunkname)
	local f, err, refused = compile(text, chunkname)
	if refused then error(err, 2) end
	return f, err
end
ENV.load = function(what, chunkname)
	if type(what) == "function" then
		local parts, size = {}, 0
		while true do
			local piece = what()
			if piece == nil or piece == "" then break end
			if type(piece) ~= "string" then error("load: the reader returned a non-string", 2) end
			size = size + #piece
			if size > 64 * 2^20 then error("load: chunk too large", 2) end
			parts[#parts + 1] = piece
		end
		what = tconcat(parts)
	end
	local f, err, refused = compile(what, chunkname or "=(load)")
	if refused then error(err, 2) end
	return f, err
end

local function file_object(text)
	local pos = 1
	local f = {}
	function f:read(fmt)
		fmt = fmt or "*l"
		if pos > #text then return nil end
		if fmt == "*a" or fmt == "a" then
			local rest = ssub(text, pos); pos = #text + 1; return rest
		elseif fmt == "*l" or fmt == "l" or fmt == "*L" or fmt == "L" then
			local e = sfind(text, "\n", pos, true) or (#text + 1)
			local line = ssub(text, pos, (fmt == "*L" or fmt == "L") and e or e - 1); pos = e + 1; return line
		elseif type(fmt) == "number" then
			local s = ssub(text, pos, pos + fmt - 1); pos = pos + fmt; return s
		end
		return nil
	end
	function f:lines() return function() return f:read("*l") end end
	function f:close() return true end
	function f:seek(whence, offset)
		if whence == "set" then pos = (offset or 0) + 1 elseif whence == "end" then pos = #text + 1 + (offset or 0) end
		return pos - 1
	end
	return f
end

ENV.io = refusing("io", {
	open = function(path, mode)
		local abs = absolute(path)
		if not abs then error("io.open: expected a file name", 2) end
		if in_world(abs) then return nil, abs .. ": No such file or directory" end
		mode = mode or "r"
		if mode ~= "r" and mode ~= "rb" then
			error("io.open refused: '" .. abs .. "' (mode " .. tostring(mode) .. "): mods' Lua may only read", 2)
		end
		local text, err, refused = host_read(abs, true)
		if not text then
			if refused then error(err, 2) end
			return nil, err
		end
		return file_object(text)
	end,
	write = function() end,
})

---------------------------------------------------------------------------------------------
-- registrations

local in_api = 0       -- > 0 while an API call runs: its own inner registrations are not new

local recorded = 0
local function record(api, name, def, model)
	if in_api > 0 or type(def) ~= "table" then return end
	recorded = recorded + 1
	if recorded > 20000 then
		if recorded == 20001 then error("more than 20000 registrations: the rest are not read", 0) end
		return
	end
	if type(name) ~= "string" then name = "" end
	emit({t = "reg", api = api, name = sgsub(name, "^:", ""), mod = current_mod,
		model = model, source = where_from(3), def = json(def, FIRST)})
end

local function call_api(fn, ...)
	in_api = in_api + 1
	local res = {pcall(fn, ...)}
	in_api = in_api - 1
	if not res[1] then
		local err = res[2]
		if expired or err == TIMEOUT then error(TIMEOUT, 0) end
		if err == NOMEMORY or err == "not enough memory" then error(NOMEMORY, 0) end
		-- the API's own work failing on the stubbed engine: the registration is kept
		return nil
	end
	return unpack(res, 2, table.maxn(res))
end

-- api(name, def) or api:register(name, def); name-is-model for player_api
local function capturing(api, fn, name_is_model)
	return function(...)
		local a, b, c = ...
		local name, def = a, b
		if type(a) == "table" and type(b) == "string" then name, def = b, c end
		record(api, name, def, name_is_model and name or nil)
		if fn then return call_api(fn, ...) end
		return nil
	end
end

local function entity_api(def)
	if def.logic ~= nil or def.brainfunc ~= nil then return "mobkit" end
	return "entity"
end

-- the mod APIs a registration can come through: global name -> function name -> api
local HOOKS = {
	mobs = {register_mob = "mobs_redo", register_arrow = "mobs_redo"},
	mcl_mobs = {register_mob = "mcl_mobs", register_arrow = "mcl_mobs"},
	player_api = {register_model = "player_api"},
	creatura = {register_mob = "creatura"},
}
local hooked = setmetatable({}, {__mode = "k"})
-- the API globals live here, never raw in ENV, so that every assignment to them is seen
-- (`mcl_mobs = mcl_mobs or {}` in one mod, `mcl_mobs = {}` in the API's own)
local api_globals = {}

-- An API table's registering functions are kept beside it, never raw in it, so that every
-- definition of them is seen and wrapped (VoxeLibre defines mcl_mobs.register_mob twice)
local function hook_table(t, names)
	if hooked[t] or getmetatable(t) ~= nil then return end
	local kept = {}
	hooked[t] = kept
	local function wrap(k, v)
		if type(v) == "function" then return capturing(names[k], v, names[k] == "player_api") end
		return v
	end
	for fname in pairs(names) do
		local v = rawget(t, fname)
		if v ~= nil then kept[fname] = wrap(fname, v); rawset(t, fname, nil) end
	end
	setmetatable(t, {
		__newindex = function(tt, k, v)
			if names[k] then kept[k] = wrap(k, v) else rawset(tt, k, v) end
		end,
		__index = function(_, k)
			if not names[k] then return nil end
			-- not (yet) defined by the API mod: the registration is still taken
			return kept[k] or capturing(names[k], nil, names[k] == "player_api")
		end,
	})
end

---------------------------------------------------------------------------------------------
-- the engine: core / minetest

local core = {}
ENV.core, ENV.minetest = core, core

local function stub_registry(kind)
	local t = {}
	core["registered_" .. kind] = t
	return t
end
local registered_entities = stub_registry("entities")
local registered_items = stub_registry("items")
local item_kinds = {node = stub_registry("nodes"), craftitem = stub_registry("craftitems"),
	tool = stub_registry("tools")}
for _, kind in ipairs({"abms", "lbms", "aliases", "ores", "biomes", "decorations", "schematics",
		"chatcommands", "privileges", "craft_predicts"}) do stub_registry(kind) end

core.register_entity = function(name, def)
	if type(def) ~= "table" then return end
	if in_api == 0 then record(entity_api(def), name, def) end
	if type(name) == "string" then registered_entities[sgsub(name, "^:", "")] = def end
end
for kind, reg in pairs(item_kinds) do
	core["register_" .. kind] = function(name, def)
		if type(name) ~= "string" or type(def) ~= "table" then return end
		name = sgsub(name, "^:", "")
		def.name = name
		reg[name] = def
		registered_items[name] = def
	end
end
core.register_item = core.register_craftitem
core.override_item = function(name, redef)
	local def = registered_items[name]
	if def and type(redef) == "table" then for k, v in pairs(redef) do def[k] = v end end
end
core.register_alias = function(a, b) core.registered_aliases[a] = b end
core.register_alias_force = core.register_alias

local mods_loaded = {}
core.register_on_mods_loaded = function(fn)
	if type(fn) == "function" then mods_loaded[#mods_loaded + 1] = {current_mod, fn} end
end

core.get_modpath = function(name) return MODS[name] end
core.get_current_modname = function() return current_mod end
core.get_modnames = function()
	local names = {}
	for name in pairs(MODS) do names[#names + 1] = name end
	table.sort(names)
	return names
end
core.get_worldpath = function() return world end
core.get_mod_data_path = function() return world .. "/mod_data/" .. current_mod end
core.get_game_info = function() return {id = "", title = "", author = "", path = world} end
core.get_dir_list = function(path, want_dirs)
	local abs = absolute(path)
	if not abs or in_world(abs) then return {} end
	return {host_list(abs, want_dirs == nil and 0 or (want_dirs and 1 or 2))}
end
core.get_item_group = function(name, group)
	local def = registered_items[name]
	local groups = def and rawget(def, "groups")
	return type(groups) == "table" and tonumber(groups[group]) or 0
end
core.get_node_group = core.get_item_group
core.global_exists = function(name) return rawget(ENV, name) ~= nil or api_globals[name] ~= nil end
core.get_us_time = function() return floor(clock() * 1e6) end
core.get_gametime = function() return 0 end
core.get_day_count = function() return 0 end
core.get_timeofday = function() return 0.5 end
core.is_singleplayer = function() return true end
core.get_version = function() return {project = "Luanti", string = "5.10.0", proto_min = 37, proto_max = 46} end
core.features = setmetatable({}, {__index = function() return true end})
core.has_feature = function() return true end
core.log = function() end
core.debug = function() end
core.request_insecure_environment = function() return nil end
core.request_http_api = function() return nil end
core.colorize = function(_, s) return s end
core.get_color_escape_sequence = function() return "" end
core.strip_colors = function(s) return s end
core.formspec_escape = function(s) return s end
core.is_yes = function(v)
	if type(v) == "string" then v = v:lower() end
	return v == true or v == "y" or v == "yes" or v == "true" or v == "1" or v == 1 or v == "on"
end
core.pos_to_string = function(p)
	return "(" .. tostring(p and p.x) .. "," .. tostring(p and p.y) .. "," .. tostring(p and p.z) .. ")"
end
core.parse_json = function() return nil end
core.write_json = function() return "null" end
core.serialize = function() return "return nil" end
core.deserialize = function() return nil end
core.get_mapgen_setting = function() return nil end
core.get_mapgen_params = function() return {mgname = "v7", seed = 0, water_level = 1, chunksize = 5} end
core.mkdir = function() return false end
core.safe_file_write = function() return false end

local function translator(domain)
	return function(s, ...)
		if type(s) ~= "string" then return s end
		local args = {...}
		return (sgsub(sgsub(s, "@(%d)", function(n) return tostring(args[tonumber(n)] or "") end), "@n", "\n"))
	end
end
core.get_translator = translator
core.translate = function(domain, s, ...) return translator(domain)(s, ...) end

local settings = {}
function settings:get() return nil end
function settings:get_bool(_, default) return default end
function settings:get_flags() return {} end
function settings:get_np_group() return nil end
function settings:get_pos() return nil end
function settings:get_names() return {} end
function settings:has() return false end
function settings:to_table() return {} end
function settings:set() end
function settings:set_bool() end
function settings:remove() return false end
function settings:write() return true end
core.settings = with_noops(settings)
core.setting_get = function() return nil end
core.setting_getbool = function() return nil end
ENV.Settings = function() return core.settings end

local storage = {}
function storage:get_string() return "" end
function storage:get_int() return 0 end
function storage:get_float() return 0 end
function storage:get() return nil end
function storage:contains() return false end
function storage:get_keys() return {} end
function storage:to_table() return {fields = {}} end
core.get_mod_storage = function() return with_noops(storage) end

with_noops(core)

---------------------------------------------------------------------------------------------
-- Luanti's builtin helpers mods use at load time

local tbl, str = ENV.table, string
tbl.copy = function(t, seen)
	if type(t) ~= "table" then return t end
	seen = seen or {}
	if seen[t] then return seen[t] end
	local c = {}
	seen[t] = c
	for k, v in next, t do c[tbl.copy(k, seen)] = tbl.copy(v, seen) end
	return setmetatable(c, getmetatable(t))
end
tbl.indexof = function(list, val)
	for i, v in ipairs(list) do if v == val then return i end end
	return -1
end
tbl.insert_all = function(t, other)
	for _, v in ipairs(other) do t[#t + 1] = v end
	return t
end
tbl.key_value_swap = function(t)
	local s = {}
	for k, v in pairs(t) do s[v] = k end
	return s
end
tbl.shuffle = function(t) return t end
tbl.keyof = function(t, val)
	for k, v in pairs(t) do if v == val then return k end end
	return nil
end
str.split = function(s, delim, include_empty, max_splits, sep_is_pattern)
	delim = delim or ","
	max_splits = max_splits or -2
	local items, pos, plain = {}, 1, not sep_is_pattern
	repeat
		local np, npe = sfind(s, delim, pos, plain)
		local part = ssub(s, pos, np and np - 1)
		if include_empty or part ~= "" then
			max_splits = max_splits - 1
			items[#items + 1] = part
		end
		pos = npe and npe + 1
	until not np or max_splits == -1
	if pos and (include_empty or ssub(s, pos) ~= "") then items[#items + 1] = ssub(s, pos) end
	return items
end
str.trim = function(s) return smatch(s, "^%s*(.-)%s*$") end
ENV.math.hypot = function(x, y) return math.sqrt(x * x + y * y) end
ENV.math.sign = function(x) return x > 0 and 1 or (x < 0 and -1 or 0) end
ENV.math.round = function(x) return x >= 0 and floor(x + 0.5) or math.ceil(x - 0.5) end
ENV.math.factorial = function(n) local r = 1 for i = 2, n do r = r * i end return r end

ENV.dump = function(v) return tostring(v) end
ENV.dump2 = ENV.dump
ENV.ItemStack = function(item)
	local name = type(item) == "string" and smatch(item, "^(%S*)") or ""
	return with_noops({get_name = function() return name end, get_count = function() return 1 end,
		is_empty = function() return name == "" end})
end
for _, name in ipairs({"VoxelManip", "PseudoRandom", "PcgRandom", "SecureRandom", "PerlinNoise",
		"PerlinNoiseMap", "AreaStore", "VoxelArea", "Raycast", "ValueNoise", "ValueNoiseMap"}) do
	ENV[name] = NOOP
end

local vector = {}
ENV.vector = vector
local function vec(x, y, z) return {x = x or 0, y = y or 0, z = z or 0} end
vector.new = function(x, y, z)
	if type(x) == "table" then return vec(x.x, x.y, x.z) end
	return vec(x, y, z)
end
vector.zero = function() return vec(0, 0, 0) end
vector.copy = function(v) return vec(v.x, v.y, v.z) end
local function by(op)
	return function(a, b)
		if type(b) == "table" then return vec(op(a.x, b.x), op(a.y, b.y), op(a.z, b.z)) end
		return vec(op(a.x, b), op(a.y, b), op(a.z, b))
	end
end
vector.add = by(function(p, q) return p + q end)
vector.subtract = by(function(p, q) return p - q end)
vector.multiply = by(function(p, q) return p * q end)
vector.divide = by(function(p, q) return p / q end)
vector.length = function(v) return math.sqrt(v.x * v.x + v.y * v.y + v.z * v.z) end
vector.distance = function(a, b) return vector.length(vector.subtract(a, b)) end
vector.normalize = function(v)
	local l = vector.length(v)
	return l == 0 and vec(0, 0, 0) or vector.divide(v, l)
end
vector.apply = function(v, f) return vec(f(v.x), f(v.y), f(v.z)) end
vector.floor = function(v) return vector.apply(v, floor) end
vector.round = function(v) return vector.apply(v, ENV.math.round) end
vector.equals = function(a, b) return a.x == b.x and a.y == b.y and a.z == b.z end
vector.offset = function(v, x, y, z) return vec(v.x + x, v.y + y, v.z + z) end
vector.to_string = core.pos_to_string
with_noops(vector)

---------------------------------------------------------------------------------------------
-- mod APIs a registration may come through, as stubs when their mod is not in the run

local function api_stub(fields)
	return setmetatable(fields, {__index = function(_, k)
		-- flags a mod sets for itself ("custom_spawn_animal") read as unset, calls run on
		if type(k) == "string" and sfind(k, "^custom_") then return nil end
		return NOOP
	end})
end

local STUBS = {}
STUBS.mobs = function()
	return api_stub({mod = "redo", version = "20250101", invis = {}, spawning_mobs = {},
		fallback_node = "default:dirt", translate = translator("mobs"),
		register_mob = capturing("mobs_redo"), register_arrow = capturing("mobs_redo")})
end
STUBS.mcl_mobs = function()
	return api_stub({registered_mobs = {}, spawning_mobs = {},
		register_mob = capturing("mcl_mobs"), register_arrow = capturing("mcl_mobs")})
end
STUBS.player_api = function()
	return api_stub({registered_models = {}, player_attached = {},
		register_model = capturing("player_api", nil, true)})
end
STUBS.creatura = function()
	return api_stub({registered_mobs = {}, register_mob = capturing("creatura")})
end
STUBS.mobkit = function() return api_stub({}) end

local made = {}
local lenient = {}     -- mods whose hard dependencies are missing
setmetatable(ENV, {
	__index = function(_, k)
		local v = api_globals[k]
		if v ~= nil then return v end
		local make = STUBS[k]
		if not make then
			-- such a mod reads its dependencies' globals, named any way (mcl_init's is
			-- mcl_vars): a global nothing defined answers with no-ops for it, nil for others
			if lenient[current_mod] and type(k) == "string" then return NOOP end
			return nil
		end
		if made[k] == nil then made[k] = make() end
		return made[k]
	end,
	__newindex = function(t, k, v)
		if HOOKS[k] then
			if type(v) == "table" then hook_table(v, HOOKS[k]) end
			api_globals[k] = v
			return
		end
		rawset(t, k, v)
	end,
})

---------------------------------------------------------------------------------------------
-- running a mod

local function failure(err)
	deadline = huge
	local where, message
	if expired or err == TIMEOUT then
		where = expired_where or where_from(2)
		message = sformat("stopped after %g s (an endless loop?)", timeout)
	elseif out_of_memory or err == NOMEMORY or err == "not enough memory" then
		where = raised.err == err and raised.where or where_from(2)
		message = "stopped: out of memory (the memory limit of mods' Lua)"
	elseif type(err) == "string" then
		local w, m = smatch(err, "^([^:\n]+:%d+): (.*)$")
		if w and not sfind(w, " ") then where, message = w, m else where, message = where_from(2), err end
	else
		where, message = raised.err == err and raised.where or where_from(2), "error object " .. type(err)
	end
	return {where = where, message = message}
end

local function protected(mod, fn, ...)
	current_mod = mod
	expired, out_of_memory, expired_where = false, false, nil
	deadline = host_now() + timeout
	local ok, err = xpcall(fn, failure, ...)
	deadline = huge
	if not ok then
		if type(err) ~= "table" then err = {where = "", message = tostring(err)} end
		emit({t = "problem", mod = mod, where = err.where or "", message = err.message or ""})
	end
	expired, out_of_memory = false, false

	collectgarbage()
	return ok
end

local api = {}
function api.add_mod(name, path, missing_deps)
	MODS[name] = path
	lenient[name] = missing_deps and true or nil
end
-- a hard dependency missing from the run: its global (a mod's table is named after it, as
-- `default` is) answers every call with a no-op, so that its dependants' init code runs on
function api.stand_in(name)
	if not STUBS[name] then STUBS[name] = function() return api_stub({}) end end
end
function api.run_mod(name)
	emit({t = "begin", mod = name})
	protected(name, function()
		local f, err = load_mod_file(MODS[name] .. "/init.lua", "init.lua")
		if not f then error(err, 0) end
		return run_file(f, getinfo(f, "S").source)
	end)
	emit({t = "end", mod = name})
end
function api.finish()
	for _, entry in ipairs(mods_loaded) do
		emit({t = "begin", mod = entry[1]})
		protected(entry[1], entry[2])
		emit({t = "end", mod = entry[1]})
	end
end
return api
