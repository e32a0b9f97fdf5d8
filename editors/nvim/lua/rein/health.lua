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
end

return M
