-- :checkhealth rein — the binary, a real initialize round trip with the
-- server, and the provider configuration (without ever showing a key).

local M = {}

local health = vim.health

--- One LSP message, framed.
local function frame(msg)
  local body = vim.json.encode(msg)
  return ('Content-Length: %d\r\n\r\n%s'):format(#body, body)
end

--- The first complete message with this id in `buffer`, decoded.
local function response(buffer, id)
  local pos = 1
  while true do
    local header_end = buffer:find('\r\n\r\n', pos, true)
    if not header_end then
      return nil
    end
    local length = tonumber(buffer:sub(pos, header_end):match('Content%-Length: (%d+)'))
    if not length then
      return nil
    end
    local body = buffer:sub(header_end + 4, header_end + 3 + length)
    if #body < length then
      return nil
    end
    local ok, msg = pcall(vim.json.decode, body)
    if ok and type(msg) == 'table' and msg.id == id then
      return msg
    end
    pos = header_end + 4 + length
  end
end

--- Starts `cmd`, does initialize → shutdown → exit. Returns the initialize
--- result, or nil and what went wrong.
local function round_trip(cmd, root)
  local out, err = '', ''
  local ok, proc = pcall(vim.system, cmd, {
    stdin = true,
    cwd = root,
    stdout = function(_, data)
      out = out .. (data or '')
    end,
    stderr = function(_, data)
      err = err .. (data or '')
    end,
  })
  if not ok then
    return nil, 'could not start it: ' .. tostring(proc)
  end
  local function ask(id, method, params, timeout)
    proc:write(frame({ jsonrpc = '2.0', id = id, method = method, params = params }))
    vim.wait(timeout, function()
      return response(out, id) ~= nil
    end, 20)
    return response(out, id)
  end
  local init = ask(1, 'initialize', {
    processId = vim.fn.getpid(),
    rootUri = vim.uri_from_fname(root),
    capabilities = vim.empty_dict(),
    clientInfo = { name = 'rein.nvim checkhealth' },
  }, 10000)
  local result, problem = nil, nil
  if not init then
    problem = 'no answer to initialize within 10 s'
  elseif init.error then
    problem = 'initialize failed: ' .. vim.inspect(init.error)
  else
    result = init.result
    proc:write(frame({ jsonrpc = '2.0', method = 'initialized', params = vim.empty_dict() }))
    local down = ask(2, 'shutdown', vim.NIL, 10000)
    if not down then
      problem = 'no answer to shutdown within 10 s'
    end
    proc:write(frame({ jsonrpc = '2.0', method = 'exit' }))
  end
  pcall(function()
    proc:write(nil)
  end)
  local exited = proc:wait(5000)
  if exited.signal ~= 0 or (exited.code ~= 0 and not problem) then
    problem = problem or ('it exited with code %d'):format(exited.code)
  end
  if problem and err ~= '' then
    problem = problem .. '; its stderr ends with: ' .. err:sub(-400)
  end
  return result, problem
end

local function exists(path)
  return path and vim.uv.fs_stat(path) ~= nil
end

local function provider_check(settings, root)
  local env = vim.env
  local key_in_settings = settings.apiKey ~= nil and settings.apiKey ~= ''
  local provider = settings.provider or env.REIN_PROVIDER
  local files = {}
  local xdg = env.XDG_CONFIG_HOME or ((env.HOME or '') .. '/.config')
  for _, f in ipairs({ root .. '/.rein/config.toml', xdg .. '/rein/config.toml' }) do
    if exists(f) then
      table.insert(files, f)
    end
  end
  local in_files = #files > 0 and (' (or in ' .. table.concat(files, ', ') .. ')') or ''
  if provider == 'scripted' then
    health.ok('provider: the scripted demo model (no network, no key)')
    return
  end
  if provider == 'anthropic' or (not provider and env.ANTHROPIC_API_KEY) then
    if key_in_settings or env.ANTHROPIC_API_KEY then
      health.ok(
        'provider: Anthropic, with an API key ('
          .. (key_in_settings and 'settings' or 'ANTHROPIC_API_KEY')
          .. ')'
      )
    else
      health.error('provider: Anthropic, but no API key' .. in_files, {
        'set ANTHROPIC_API_KEY, or settings.apiKey (a function can read it from a password store)',
      })
    end
    return
  end
  if provider == 'openai' or (not provider and (env.OPENAI_API_KEY or env.OPENAI_BASE_URL)) then
    local base = settings.baseUrl or env.OPENAI_BASE_URL
    if key_in_settings or env.OPENAI_API_KEY or base then
      health.ok(
        'provider: OpenAI-compatible'
          .. (base and (' at ' .. base) or '')
          .. ((key_in_settings or env.OPENAI_API_KEY) and ', with an API key' or ', no API key')
      )
    else
      health.error('provider: OpenAI, but no API key and no base URL' .. in_files, {
        'set OPENAI_API_KEY (hosted) or OPENAI_BASE_URL (Ollama, llama.cpp, vLLM, …)',
      })
    end
    return
  end
  if provider then
    health.warn(
      ('provider: %q is not one Rein knows (anthropic, openai, scripted)'):format(provider)
    )
    return
  end
  if #files > 0 then
    health.info(
      'provider: none in Neovim or the environment; it may be set in ' .. table.concat(files, ', ')
    )
  else
    health.warn('no model provider configured', {
      'set ANTHROPIC_API_KEY or OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)',
      "or vim.g.rein = { settings = { provider = 'anthropic', apiKey = function() ... end } }",
      "or settings.provider = 'scripted' to try the demo model",
    })
  end
end

--- The rules of `permissions.allow` that cover some tool of `name`.
local function allows_server(settings, name)
  local allow = type(settings.permissions) == 'table' and settings.permissions.allow or nil
  if type(allow) ~= 'table' then
    return false
  end
  for _, rule in ipairs(allow) do
    if
      type(rule) == 'string'
      and (rule == 'mcp__*' or vim.startswith(rule, 'mcp__' .. name .. '__'))
    then
      return true
    end
  end
  return false
end

--- `settings.mcpServers`: what the server would refuse, commands not
--- found, `${NAME}` references to variables that are not set. Never a
--- value of `env` or `headers`.
local function mcp_check(settings)
  local config = require('rein.config')
  health.start('MCP servers')
  if settings.mcpServers == nil then
    health.info(
      'none in settings.mcpServers (`rein doctor` also lists those of .mcp.json and config.toml)'
    )
    return
  end
  local servers, problems = config.mcp_servers(settings.mcpServers)
  for _, problem in ipairs(problems) do
    health.error(problem)
  end
  local names = vim.tbl_keys(servers or {})
  table.sort(names)
  for _, name in ipairs(names) do
    local server = servers[name]
    if server.enabled == false then
      health.info(name .. ': off (enabled = false)')
    else
      local missing = {}
      for _, field in ipairs({ 'env', 'headers' }) do
        for _, value in pairs(server[field] or {}) do
          for var in value:gmatch('%${([%w_]+)}') do
            if vim.env[var] == nil and not vim.list_contains(missing, var) then
              table.insert(missing, var)
            end
          end
        end
      end
      table.sort(missing)
      if #missing > 0 then
        health.warn(
          ('%s: %s not set in the environment Neovim runs in (Rein fills in ${NAME} from it), so the server will not start'):format(
            name,
            table.concat(missing, ', ')
          ),
          { 'export it in the shell you start Neovim from' }
        )
      end
      local tools = ('its tools are mcp__%s__<tool>'):format(name)
      if not allows_server(settings, name) then
        tools = tools
          .. (', and each call asks you first (allow them: permissions.allow = { %q })'):format(
            'mcp__' .. name .. '__*'
          )
      end
      if server.command then
        local exe = vim.fn.exepath(vim.fn.expand(server.command))
        if exe == '' then
          health.warn(
            ('%s: the command %q is not an executable file or on PATH'):format(name, server.command)
          )
        else
          health.ok(('%s: starts %s; %s'):format(name, exe, tools))
        end
      else
        health.ok(('%s: an HTTP server; %s'):format(name, tools))
      end
    end
  end
end

function M.check()
  local config = require('rein.config')

  health.start('Neovim')
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Rein needs Neovim 0.11 or newer, this is ' .. tostring(vim.version()))
  end

  health.start('rein binary')
  local cmd, source = config.cmd()
  if not cmd then
    health.error(source)
    return
  end
  local version = vim.system({ cmd[1], '--version' }, { text = true }):wait(5000)
  if version.code == 0 then
    health.ok(('%s (%s, from %s)'):format(cmd[1], vim.trim(version.stdout or ''), source))
  else
    health.error(('%s --version failed: %s'):format(cmd[1], vim.trim(version.stderr or '')))
  end

  health.start('rein lsp')
  local root = vim.fn.getcwd()
  local result, problem = round_trip(cmd, root)
  if result then
    local info = result.serverInfo or {}
    health.ok(
      ('the server answers initialize (%s %s, position encoding %s)'):format(
        tostring(info.name),
        tostring(info.version),
        tostring((result.capabilities or {}).positionEncoding)
      )
    )
  end
  if problem then
    health.error('the server did not start properly: ' .. problem)
  end
  local clients = vim.lsp.get_clients({ name = 'rein' })
  if #clients > 0 then
    for _, client in ipairs(clients) do
      health.info(('running for %s (client %d)'):format(tostring(client.root_dir), client.id))
    end
  elseif config.get().enabled == false then
    health.info('not started automatically (enabled = false)')
  else
    health.info('starts for: ' .. table.concat(config.get().filetypes, ', '))
  end

  health.start('configuration')
  local settings = config.redacted_settings()
  if type(settings) ~= 'table' then
    health.error('the `settings` option must be a table')
    return
  end
  local shown = vim.inspect(settings, { newline = ' ', indent = '' })
  health.info('settings sent to the server: ' .. shown)
  local unknown = config.unknown_settings()
  if #unknown > 0 then
    health.warn('unknown settings (typos?): ' .. table.concat(unknown, ', '), {
      'known: ' .. table.concat(config.server_keys, ', '),
    })
  end
  provider_check(config.get().settings or {}, root)
  mcp_check(config.get().settings or {})
end

return M
