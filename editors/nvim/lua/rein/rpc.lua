-- The JSON-RPC id of the server's `workspace/applyEdit` requests. Rein
-- withdraws a request it no longer waits for with `$/cancelRequest {id}`,
-- which Neovim 0.11 hands to the `$/cancelRequest` handler like any
-- notification; but it gives a request's handler only `{method,
-- client_id}`, never the id (vim/lsp/rpc.lua keeps it to send the answer).
-- So the id is read where Neovim reads the message: the client's RPC object
-- gets its own `handle_body`, which notes the id of each applyEdit and then
-- hands the message on unchanged. Neovim runs request handlers in the order
-- the messages came, so the handler takes the oldest id noted for the same
-- params.
--
-- That RPC object is internal to Neovim (an upvalue of `client.rpc`): if a
-- Neovim version hides it differently, `watch` says so and nothing changes,
-- except that only the end of a task (not a withdrawal) closes its preview.

local M = {}

local METHOD = 'workspace/applyEdit'

--- Ids noted and not yet taken, by client: `{ {id, params}, … }`.
local noted = {} --- @type table<integer, table[]>

--- Whether the client's RPC object is watched, by client.
local watched = {} --- @type table<integer, boolean>

--- The RPC object behind `client.rpc` (the table whose `handle_body` Neovim
--- calls for each message), if it can be found.
local function rpc_object(client)
  local public = client and client.rpc
  local request = type(public) == 'table' and public.request
  if type(request) ~= 'function' then
    return nil
  end
  for i = 1, 50 do
    local name, value = debug.getupvalue(request, i)
    if name == nil then
      return nil
    end
    if
      name == 'client'
      and type(value) == 'table'
      and type(value.handle_body) == 'function'
      and type(value.dispatchers) == 'table'
    then
      return value
    end
  end
  return nil
end

local function note(client_id, body)
  -- Only applyEdit requests are decoded a second time.
  if type(body) ~= 'string' or not body:find('"' .. METHOD .. '"', 1, true) then
    return
  end
  local ok, message = pcall(vim.json.decode, body, { luanil = { object = true } })
  if
    ok
    and type(message) == 'table'
    and message.method == METHOD
    and message.id ~= nil
    and message.id ~= vim.NIL
  then
    noted[client_id] = noted[client_id] or {}
    table.insert(noted[client_id], { id = message.id, params = message.params })
  end
end

--- Starts noting the ids of `client`'s applyEdit requests; false when
--- Neovim's RPC object cannot be found (see the top of this file).
function M.watch(client)
  if not client or watched[client.id] ~= nil then
    return watched[client and client.id] == true
  end
  local object = rpc_object(client)
  if not object then
    watched[client.id] = false
    return false
  end
  local handle_body = object.handle_body
  local client_id = client.id
  -- The object's own field shadows the class method it was read from.
  object.handle_body = function(self, body)
    pcall(note, client_id, body)
    return handle_body(self, body)
  end
  watched[client.id] = true
  return true
end

--- Whether `client`'s request ids are known (withdrawals can be matched).
function M.watching(client_id)
  return watched[client_id] == true
end

--- The id of the applyEdit request whose handler runs now, with these
--- `params`: the oldest noted with equal params. Notes before it belong to
--- requests that never reached this handler and are dropped.
function M.take(client_id, params)
  local list = noted[client_id]
  if not list then
    return nil
  end
  for i, entry in ipairs(list) do
    if vim.deep_equal(entry.params, params) then
      for _ = 1, i do
        table.remove(list, 1)
      end
      return entry.id
    end
  end
  return nil
end

--- Forgets a client that stopped.
function M.forget(client_id)
  noted[client_id] = nil
  watched[client_id] = nil
end

return M
