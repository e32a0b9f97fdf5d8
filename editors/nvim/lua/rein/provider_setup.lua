-- :Rein setup — a model provider in a minute, as in VS Code's "Rein: Set
-- Up": Anthropic or OpenAI with a key checked by the provider at once, an
-- Ollama or llama.cpp server found running here (its models to pick), a
-- server by address, or the offline demo model. The choice applies to this
-- session at once; the lines that keep it are shown in a scratch buffer
-- for your config (a key is never written anywhere by Rein).

local M = {}

local LOCAL_SERVERS = {
  { name = 'Ollama', base_url = 'http://localhost:11434/v1' },
  { name = 'llama.cpp (llama-server)', base_url = 'http://localhost:8080/v1' },
}

local function notify(msg, level)
  vim.notify('Rein: ' .. msg, level or vim.log.levels.INFO)
end

--- rein/checkProvider with `params`; `done(checked)` with {ok, models, message}.
local function check(client, params, done)
  client:request('rein/checkProvider', params, function(err, result)
    if err or type(result) ~= 'table' then
      done({ ok = false, models = {}, message = err and err.message or 'no answer' })
    else
      done(result)
    end
  end)
end

--- Applies `settings` to this session (over the configured ones) and shows
--- how to keep them.
local function apply(settings, keep)
  local current = require('rein.config').get().settings or {}
  local merged = vim.tbl_extend('force', {}, current, settings)
  for k, v in pairs(settings) do
    if v == vim.NIL then
      merged[k] = nil
    end
  end
  require('rein').setup({ settings = merged })
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.api.nvim_buf_set_name(buf, 'rein://setup')
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, keep)
  vim.bo[buf].filetype = 'lua'
  vim.bo[buf].modifiable = false
  vim.cmd('botright split')
  vim.api.nvim_win_set_buf(0, buf)
end

local function keep_lines(fields, comment)
  local lines = {
    '-- Rein is set up for this session. To keep it, put this in your init.lua:',
  }
  if comment then
    table.insert(lines, comment)
  end
  table.insert(lines, 'vim.g.rein = vim.tbl_deep_extend("force", vim.g.rein or {}, {')
  table.insert(lines, '  settings = {')
  for _, f in ipairs(fields) do
    table.insert(lines, '    ' .. f .. ',')
  end
  table.insert(lines, '  },')
  table.insert(lines, '})')
  return lines
end

local function with_key(client, provider, name)
  local env = provider == 'anthropic' and 'ANTHROPIC_API_KEY' or 'OPENAI_API_KEY'
  local ok, key = pcall(vim.fn.inputsecret, ('Rein: your %s API key: '):format(name))
  key = ok and vim.trim(key or '') or ''
  if key == '' then
    return
  end
  notify(('checking the key with %s…'):format(name))
  check(client, { provider = provider, apiKey = key }, function(checked)
    vim.schedule(function()
      if not checked.ok then
        notify(checked.message .. ' — run :Rein setup to try another key', vim.log.levels.ERROR)
        return
      end
      apply({ provider = provider, apiKey = key, baseUrl = vim.NIL }, keep_lines({
        ('provider = %q'):format(provider),
        ('apiKey = function() return os.getenv(%q) end'):format(env),
      }, ('-- and export %s in your shell (Rein never writes the key to a file).'):format(env)))
      notify(('set up: %s took the key'):format(name))
    end)
  end)
end

local function with_server(base_url, models)
  local function use(model)
    if not model then
      return
    end
    apply({ provider = 'openai', baseUrl = base_url, model = model }, keep_lines({
      'provider = "openai"',
      ('baseUrl = %q'):format(base_url),
      ('model = %q'):format(model),
    }))
    notify(('set up: %s at %s'):format(model, base_url))
  end
  if #models == 0 then
    notify(base_url .. ' serves no model yet; load one there, then :Rein setup again', vim.log.levels.WARN)
  elseif #models == 1 then
    use(models[1])
  else
    vim.ui.select(models, { prompt = 'Rein: which model of ' .. base_url .. '?' }, use)
  end
end

--- :Rein setup
function M.run()
  local client = require('rein.lsp').client()
  if not client then
    notify('the Rein server is not running (see :checkhealth rein)', vim.log.levels.ERROR)
    return
  end
  local found, pending = {}, #LOCAL_SERVERS
  for i, server in ipairs(LOCAL_SERVERS) do
    check(client, { provider = 'openai', baseUrl = server.base_url }, function(checked)
      found[i] = { server = server, checked = checked }
      pending = pending - 1
      if pending == 0 then
        vim.schedule(function()
          M.choose(client, found)
        end)
      end
    end)
  end
end

--- The choices, once the local servers were asked.
function M.choose(client, found)
  local items = {
    { label = 'Anthropic (Claude) — an API key', run = function() with_key(client, 'anthropic', 'Anthropic') end },
    { label = 'OpenAI — an API key', run = function() with_key(client, 'openai', 'OpenAI') end },
  }
  local any = false
  for _, f in ipairs(found) do
    if f.checked.ok then
      any = true
      table.insert(items, {
        label = ('%s on this machine — %d models at %s'):format(f.server.name, #f.checked.models, f.server.base_url),
        run = function() with_server(f.server.base_url, f.checked.models) end,
      })
    end
  end
  table.insert(items, {
    label = 'Another OpenAI-compatible server…' .. (any and '' or ' (no Ollama or llama.cpp is running here)'),
    run = function()
      vim.ui.input({ prompt = 'Rein: the server address (e.g. http://localhost:1234/v1): ' }, function(text)
        text = vim.trim(text or '')
        if text == '' then
          return
        end
        if not text:match('^https?://') then
          if text:match('^%a[%w+.-]*://') then
            notify('an http:// or https:// address, please', vim.log.levels.ERROR)
            return
          end
          text = 'http://' .. text
        end
        text = text:gsub('/+$', '')
        if not text:match('/v1$') then
          text = text .. '/v1'
        end
        check(client, { provider = 'openai', baseUrl = text }, function(checked)
          vim.schedule(function()
            if checked.ok then
              with_server(text, checked.models)
            else
              notify(checked.message, vim.log.levels.ERROR)
            end
          end)
        end)
      end)
    end,
  })
  table.insert(items, {
    label = 'The offline demo model — no key, no network',
    run = function()
      apply({ provider = 'scripted', baseUrl = vim.NIL, model = vim.NIL }, keep_lines({ 'provider = "scripted"' }))
      notify('set up with the offline demo model')
    end,
  })
  vim.ui.select(items, {
    prompt = 'Rein: which model should Rein use?',
    format_item = function(item)
      return item.label
    end,
  }, function(choice)
    if choice then
      choice.run()
    end
  end)
end

--- Before a task: `go()` if a provider is configured, else say how to set
--- one up. An older server that does not answer counts as configured.
function M.ensure(client, go)
  client:request('rein/providerStatus', vim.NIL, function(err, status)
    if err or type(status) ~= 'table' or status.configured ~= false then
      go()
      return
    end
    notify(
      ('Rein needs a model before it can work: %s. Run :Rein setup'):format(status.problem or 'none is configured'),
      vim.log.levels.WARN
    )
  end)
end

return M
