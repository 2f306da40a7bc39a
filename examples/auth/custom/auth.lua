-- A custom auth file (docs/auth.md): LangGraph's Auth model in Lua, the same rules as the
-- built-in modes. authenticate turns a request into a user; the `on` handlers stamp the
-- owner on what a user creates and return the filter that limits what they see.
-- The users come from the file $AUTH_USERS names (default: users.lua beside this file).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local USERS = dofile(os.getenv("AUTH_USERS") or (here .. "users.lua"))

local auth = { on = {} }

function auth.authenticate(request)
  local token = (request.headers.authorization or ""):match("^[Bb]earer%s+(.+)$")
  if not token then
    error({ status = 401, message = "Missing authentication: send 'Authorization: Bearer <token>'" })
  end
  local user = USERS[token]
  if not user then
    error({ status = 401, message = "Invalid token" })
  end
  return user -- {identity = ..., permissions = {...}}
end

local function is_admin(user)
  for _, p in ipairs(user.permissions or {}) do
    if p == "admin" then return true end
  end
  return false
end

-- Every resource but the store: what a user creates is theirs, and they see their own.
auth.on["*"] = function(ctx, value)
  if is_admin(ctx.user) then return nil end -- no filter: everything
  if ctx.action == "create" then
    value.metadata = value.metadata or {}
    value.metadata.owner = ctx.user.identity
  elseif ctx.action == "update" and type(value.metadata) == "table" and value.metadata.owner then
    value.metadata.owner = ctx.user.identity -- nobody gives a resource away
  end
  return { owner = ctx.user.identity }
end

-- The graphs' own assistants have no owner: everyone may read, search and run them;
-- a user changes only their own.
auth.on.assistants = function(ctx, value)
  if ctx.action == "read" or ctx.action == "search" then return nil end
  return auth.on["*"](ctx, value)
end

-- The store: a user's namespaces begin with their identity.
auth.on.store = function(ctx, value)
  if is_admin(ctx.user) then return nil end
  local me = ctx.user.identity
  if ctx.action == "search" or ctx.action == "list_namespaces" then
    local key = ctx.action == "search" and "namespace_prefix" or "prefix"
    if value[key] == nil or #value[key] == 0 then value[key] = { me } end
    if value[key][1] ~= me then
      error({ status = 403, message = "store: a namespace must begin with your identity" })
    end
    return nil
  end
  local ns = value.namespace
  if type(ns) ~= "table" or ns[1] ~= me then
    error({ status = 403, message = "store: a namespace must begin with your identity" })
  end
  return nil
end

return auth
