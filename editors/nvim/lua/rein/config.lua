-- The plugin's configuration: defaults, then `vim.g.rein`, then
-- `require('rein').setup(opts)`. Nothing here talks to the server; this
-- module only answers "what did the user ask for".

local M = {}

--- The settings the server reads (README "Configuration"); anything else is
--- probably a typo, which :checkhealth points out.
M.server_keys = {
  'provider',
  'model',
  'baseUrl',
  'apiKey',
  'maxTurns',
  'maxCostUsd',
  'maxMinutes',
  'maxTokens',
  'testCommand',
  'testReport',
  'allowTestEdits',
  'permissions',
  'approvalTimeoutSecs',
  'confirmTimeoutSecs',
  'reopenTimeoutSecs',
  'scenario',
  'mcpServers',
}

--- The fields of one MCP server in `settings.mcpServers` (the server's
--- `McpServerSettings`, server/core/src/config/mcp.rs), and what each must
--- be.
M.mcp_fields = {
  type = 'string',
  command = 'string',
  args = 'strings',
  env = 'map',
  envVars = 'strings',
  url = 'string',
  headers = 'map',
  enabled = 'boolean',
  enabledTools = 'strings',
  disabledTools = 'strings',
  startupTimeoutSec = 'seconds',
  toolTimeoutSec = 'seconds',
  maxOutputTokens = 'count',
  network = 'boolean',
  readableRoots = 'strings',
  sandbox = 'string',
  startWithSession = 'boolean',
}

--- The longest MCP server name: `mcp__<server>__<tool>` must fit the 64
--- characters model APIs accept.
M.mcp_max_name = 24

M.defaults = {
  -- Start Rein automatically for buffers of these filetypes.
  enabled = true,
  -- The server command: a list (`{ '/path/to/rein', 'lsp' }`) or the path
  -- of the binary. Unset: `rein` on PATH.
  cmd = nil,
  filetypes = {
    'python',
    'rust',
    'javascript',
    'javascriptreact',
    'typescript',
    'typescriptreact',
    'go',
  },
  -- The project root is the nearest folder holding one of these; else the
  -- current directory, if the file is inside it.
  root_markers = {
    '.rein',
    '.git',
    'pyproject.toml',
    'setup.py',
    'setup.cfg',
    'Cargo.toml',
    'package.json',
    'go.mod',
  },
  -- Sent to the server as initializationOptions and as the `rein` section
  -- of workspace/configuration (camelCase keys, README "Configuration").
  -- `apiKey` may be a function returning the key, so it need not sit in
  -- your config files.
  settings = {},
  preview = {
    border = 'rounded',
    -- Enter the preview window when it opens (its keys work there).
    focus = true,
    max_width = 120,
  },
  -- vim.notify when a task ends and when the model asks a question.
  notify = true,
  -- "▶ Fix with Rein" above each test a task's run showed failing
  -- (vim.lsp.codelens; run it with `vim.lsp.codelens.run()`).
  codelens = true,
  -- :Rein trace shows the 'text' timeline in a scratch buffer or opens the
  -- 'html' report.
  trace = 'text',
  -- Where :Rein install builds the server: a clone of Rein. Unset: the
  -- repository this plugin is part of.
  install_root = nil,
}

local user_opts = nil --- @type table?

local function global_opts()
  local g = vim.g.rein
  if type(g) == 'table' then
    return g
  end
  return {}
end

--- The effective configuration.
function M.get()
  return vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), global_opts(), user_opts or {})
end

--- Records `setup()` options (merged over earlier ones).
function M.set(opts)
  user_opts = vim.tbl_deep_extend('force', user_opts or {}, opts or {})
end

--- The server command as a list, and where it came from; nil and a message
--- saying how to fix it when there is none.
--- @return string[]?, string
function M.cmd()
  local cmd = M.get().cmd
  if type(cmd) == 'string' and cmd ~= '' then
    cmd = { cmd, 'lsp' }
  end
  if type(cmd) == 'table' and type(cmd[1]) == 'string' then
    local exe = vim.fn.exepath(vim.fn.expand(cmd[1]))
    if exe == '' then
      return nil,
        ('the Rein server command %q (from your `cmd` setting) is not an executable file'):format(
          cmd[1]
        )
    end
    local argv = vim.deepcopy(cmd)
    argv[1] = exe
    return argv, 'the `cmd` setting'
  end
  if cmd ~= nil then
    return nil, 'the `cmd` setting must be a list like { "/path/to/rein", "lsp" } or a path'
  end
  local exe = vim.fn.exepath('rein')
  if exe == '' then
    return nil,
      'the `rein` binary is not on PATH: run :Rein install (builds it from the plugin\'s '
        .. 'sources), or put a rein binary on PATH, or set vim.g.rein = { cmd = { "/path/to/rein", "lsp" } }'
  end
  return { exe, 'lsp' }, 'PATH'
end

--- The `rein` binary itself (for `rein trace`): the server command's first
--- word.
--- @return string?, string?
function M.binary()
  local cmd, err = M.cmd()
  if not cmd then
    return nil, err
  end
  return cmd[1]
end

--- vim.json encodes an empty Lua table as `[]`; the server wants objects.
local function as_object(t)
  if type(t) == 'table' and next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

-- MCP servers -------------------------------------------------------------
--
-- The server reads the editor's settings as one object and refuses all of
-- it over one value of the wrong type, and refuses the whole configuration
-- over one server it cannot use. So each server is checked here as the
-- server would check it, and one it would refuse is left out and reported:
-- the other servers and every other setting still work.

local function is_unset(v)
  return v == nil or v == vim.NIL
end

local function fits(kind, v)
  if kind == 'string' then
    return type(v) == 'string'
  elseif kind == 'boolean' then
    return type(v) == 'boolean'
  elseif kind == 'strings' then
    if type(v) ~= 'table' or not vim.islist(v) then
      return false
    end
    for _, item in ipairs(v) do
      if type(item) ~= 'string' then
        return false
      end
    end
    return true
  elseif kind == 'map' then
    if type(v) ~= 'table' then
      return false
    end
    for k, item in pairs(v) do
      if type(k) ~= 'string' or type(item) ~= 'string' then
        return false
      end
    end
    return true
  elseif kind == 'seconds' then
    return type(v) == 'number' and v > 0 and v <= 86400
  elseif kind == 'count' then
    return type(v) == 'number' and v >= 1 and v == math.floor(v) and v < 2 ^ 53
  end
  return false
end

local WHY = {
  string = 'must be a string',
  strings = 'must be a list of strings',
  map = 'must be a table of strings by name (a value may be ${NAME}, a variable of your environment)',
  boolean = 'must be true or false',
  seconds = 'must be a number of seconds above 0 (at most 86400)',
  count = 'must be a whole number of at least 1',
}

--- Why `name` cannot name an MCP server (`check_name` in config/mcp.rs).
--- @return string?
function M.mcp_name_problem(name)
  if
    type(name) ~= 'string'
    or #name < 1
    or #name > M.mcp_max_name
    or not name:match('^[A-Za-z0-9_-]+$')
    or name:find('__', 1, true)
  then
    return ('the name must be 1 to %d ASCII letters, digits, - or _ (never __): its tools are named mcp__<server>__<tool>'):format(
      M.mcp_max_name
    )
  end
end

local HTTP_TYPES = { http = true, ['streamable-http'] = true, streamableHttp = true }

--- Why the server would refuse this (type-checked) entry, per config/mcp.rs.
local function entry_problem(s)
  local kind = s.type and vim.trim(s.type)
  if s.command and s.url then
    return 'set command (a stdio server) or url (an HTTP server), not both'
  elseif s.command and (kind == nil or kind == 'stdio') then
    if vim.trim(s.command) == '' then
      return 'command is empty'
    end
  elseif s.url and (kind == nil or HTTP_TYPES[kind]) then
    if not (vim.startswith(s.url, 'http://') or vim.startswith(s.url, 'https://')) then
      return 'url must start with http:// or https://'
    end
  elseif s.url and kind == 'sse' then
    return 'the SSE transport is not supported: use the server\'s Streamable HTTP endpoint (type "http")'
  elseif kind ~= nil then
    return ('type %q does not fit the entry (stdio needs command, http needs url)'):format(kind)
  else
    return 'set command (a stdio server) or url (an HTTP server)'
  end
  local sandbox = s.sandbox and vim.trim(s.sandbox)
  if sandbox ~= nil and sandbox ~= 'on' and sandbox ~= 'off' then
    return 'sandbox must be "on" or "off"'
  end
  for _, root in ipairs(s.readableRoots or {}) do
    if not (root:sub(1, 1) == '/' or root:match('^%a:[/\\]')) then
      return 'readableRoots must be absolute paths'
    end
  end
end

--- The servers of `settings.mcpServers` the server would accept (nil: none
--- to send), ready to encode as JSON, and why each other one is left out
--- (never quoting a value: it may be a secret).
--- @return table? servers, string[] problems
function M.mcp_servers(value)
  local problems = {}
  if is_unset(value) then
    return nil, problems
  end
  if type(value) ~= 'table' or (next(value) ~= nil and vim.islist(value)) then
    table.insert(
      problems,
      'settings.mcpServers must be a table of servers by name, e.g. { github = { command = ... } }; it is ignored'
    )
    return nil, problems
  end
  local names = vim.tbl_keys(value)
  table.sort(names, function(a, b)
    return tostring(a) < tostring(b)
  end)
  local servers = {}
  for _, name in ipairs(names) do
    local entry = value[name]
    local why = M.mcp_name_problem(name)
    local server = {}
    if not why and type(entry) ~= 'table' then
      why = 'must be a table such as { command = "npx", args = { ... } }'
    end
    if not why then
      local fields = vim.tbl_keys(entry)
      table.sort(fields, function(a, b)
        return tostring(a) < tostring(b)
      end)
      for _, field in ipairs(fields) do
        local v = entry[field]
        local kind = type(field) == 'string' and M.mcp_fields[field] or nil
        if not kind then
          -- The server would ignore it; a misspelt `disabledTools` ignored
          -- would offer tools you meant to hide.
          local known = vim.tbl_keys(M.mcp_fields)
          table.sort(known)
          why = ('%s is not a field of an MCP server (known: %s)'):format(
            tostring(field),
            table.concat(known, ', ')
          )
          break
        end
        if not is_unset(v) then
          if not fits(kind, v) then
            why = field .. ' ' .. WHY[kind]
            break
          end
          -- vim.json encodes an empty table as `[]`; a map must be `{}`.
          server[field] = kind == 'map' and as_object(vim.deepcopy(v)) or vim.deepcopy(v)
        end
      end
    end
    -- A disabled entry is kept but never started: the server only reads it.
    if not why and server.enabled ~= false then
      why = entry_problem(server)
    end
    if why then
      table.insert(
        problems,
        ('settings.mcpServers.%s: %s; this server is left out'):format(tostring(name), why)
      )
    else
      servers[name] = server
    end
  end
  if next(servers) == nil then
    return nil, problems
  end
  return servers, problems
end

--- Whether `value` is only references to your environment (`${NAME}`,
--- `Bearer ${TOKEN}`, `${USER}:${PASSWORD}`): nothing secret in the text.
function M.is_reference_only(value)
  if type(value) ~= 'string' or not value:find('%${[%w_]+}') then
    return false
  end
  local rest = value:gsub('^%a+ +', '', 1):gsub('%${[%w_]+}', '')
  return rest:match('^[%s:@/.,;-]*$') ~= nil
end

local HIDDEN = '(hidden)'

local function hidden_unless_reference(value)
  if type(value) ~= 'string' or value == '' or M.is_reference_only(value) then
    return value
  end
  return HIDDEN
end

--- A URL without its credentials (user info, query, fragment); nil: not a
--- URL with any.
local function url_without_secrets(text)
  if type(text) ~= 'string' then
    return nil
  end
  local scheme, rest = text:match('^(%a[%w+.-]*://)(.*)$')
  if not scheme then
    return nil
  end
  local authority = rest:match('^[^/?#]*')
  local after = rest:sub(#authority + 1)
  local path = after:match('^[^?#]*')
  local query = after:find('?', 1, true)
  local fragment = after:find('#', 1, true)
  local host = authority:match('@([^@]*)$')
  if not host and not query and not fragment then
    return nil
  end
  return scheme
    .. (host and (HIDDEN .. '@' .. host) or authority)
    .. path
    .. (query and ('?' .. HIDDEN) or '')
    .. (fragment and not query and ('#' .. HIDDEN) or '')
end

local SECRET_SUFFIXES =
  { 'token', 'key', 'secret', 'password', 'passwd', 'pwd', 'auth', 'credential', 'credentials' }

local function secret_name(name)
  name = name:lower()
  for _, suffix in ipairs(SECRET_SUFFIXES) do
    if vim.endswith(name, suffix) then
      return true
    end
  end
  return false
end

--- Arguments as they may be shown: URLs with credentials, `--token=…`,
--- `--api-key …` and `API_KEY=…` hidden.
local function args_without_secrets(args)
  local shown, next_is_secret = {}, false
  for _, arg in ipairs(args) do
    if type(arg) ~= 'string' then
      table.insert(shown, arg)
    elseif next_is_secret and not vim.startswith(arg, '-') then
      next_is_secret = false
      table.insert(shown, hidden_unless_reference(arg))
    else
      next_is_secret = false
      local url = url_without_secrets(arg)
      local name, value = arg:match('^(%-*[%w_.-]+)=(.*)$')
      if url then
        table.insert(shown, url)
      elseif name and secret_name(name) then
        local hidden = hidden_unless_reference(value)
        table.insert(shown, hidden == value and arg or (name .. '=' .. HIDDEN))
      else
        if arg:match('^%-%-?[%w_.-]+$') and secret_name(arg) then
          next_is_secret = true
        end
        table.insert(shown, arg)
      end
    end
  end
  return shown
end

--- One MCP server as it may be shown: values written inline in `env` and
--- `headers`, and credentials in its URL and arguments, hidden.
local function mcp_server_shown(server)
  if type(server) ~= 'table' then
    return server
  end
  local shown = vim.deepcopy(server)
  for _, field in ipairs({ 'env', 'headers' }) do
    if type(shown[field]) == 'table' then
      for k, v in pairs(shown[field]) do
        shown[field][k] = hidden_unless_reference(v)
      end
    end
  end
  if type(shown.url) == 'string' then
    shown.url = url_without_secrets(shown.url) or shown.url
  end
  if type(shown.args) == 'table' then
    shown.args = args_without_secrets(shown.args)
  end
  return shown
end

--- The settings to send to the server, the apiKey resolved and the MCP
--- servers checked. Never print the result: it may hold the key.
--- @return table settings, string? error
function M.server_settings()
  local settings = vim.deepcopy(M.get().settings or {})
  if type(settings) ~= 'table' then
    return vim.empty_dict(), 'the `settings` option must be a table'
  end
  local errors = {}
  if type(settings.apiKey) == 'function' then
    local ok, key = pcall(settings.apiKey)
    if ok and type(key) == 'string' then
      settings.apiKey = vim.trim(key)
    else
      settings.apiKey = nil
      table.insert(errors, 'the `settings.apiKey` function failed or returned no string')
    end
  end
  if settings.permissions ~= nil then
    settings.permissions = as_object(settings.permissions)
  end
  if settings.mcpServers ~= nil then
    local servers, problems = M.mcp_servers(settings.mcpServers)
    settings.mcpServers = servers
    vim.list_extend(errors, problems)
  end
  return as_object(settings), #errors > 0 and table.concat(errors, '\n') or nil
end

--- The settings as they may be shown: the key replaced by a note, and the
--- MCP servers' secrets written inline (`env` and `headers` values other
--- than `${NAME}` references, credentials in URLs and arguments) hidden.
function M.redacted_settings()
  local settings = vim.deepcopy(M.get().settings or {})
  if type(settings) == 'table' and settings.apiKey ~= nil then
    settings.apiKey = '(set, hidden)'
  end
  if type(settings) == 'table' and type(settings.mcpServers) == 'table' then
    for name, server in pairs(settings.mcpServers) do
      settings.mcpServers[name] = mcp_server_shown(server)
    end
  end
  return settings
end

--- Unknown setting names (likely typos).
function M.unknown_settings()
  local unknown = {}
  local settings = M.get().settings
  if type(settings) ~= 'table' then
    return unknown
  end
  for key in pairs(settings) do
    if not vim.list_contains(M.server_keys, key) then
      table.insert(unknown, tostring(key))
    end
  end
  table.sort(unknown)
  return unknown
end

return M
