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
}

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
  -- :Rein trace shows the 'text' timeline in a scratch buffer or opens the
  -- 'html' report.
  trace = 'text',
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
      'the `rein` binary is not on PATH: build it (`cargo build --release -p rein`) and put '
        .. 'target/release/rein on PATH, or set vim.g.rein = { cmd = { "/path/to/rein", "lsp" } }'
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

--- The settings to send to the server, the apiKey resolved. Never print the
--- result: it may hold the key.
--- @return table settings, string? error
function M.server_settings()
  local settings = vim.deepcopy(M.get().settings or {})
  if type(settings) ~= 'table' then
    return vim.empty_dict(), 'the `settings` option must be a table'
  end
  if type(settings.apiKey) == 'function' then
    local ok, key = pcall(settings.apiKey)
    if ok and type(key) == 'string' then
      settings.apiKey = vim.trim(key)
    else
      settings.apiKey = nil
      return as_object(settings), 'the `settings.apiKey` function failed or returned no string'
    end
  end
  if settings.permissions ~= nil then
    settings.permissions = as_object(settings.permissions)
  end
  return as_object(settings), nil
end

--- The settings as they may be shown: the key replaced by a note.
function M.redacted_settings()
  local settings = vim.deepcopy(M.get().settings or {})
  if type(settings) == 'table' and settings.apiKey ~= nil then
    settings.apiKey = '(set, hidden)'
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
