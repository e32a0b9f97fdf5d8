-- Rein for Neovim: the public Lua API. Nothing here is needed to get
-- started; the plugin starts Rein for your project's files on its own
-- (see :help rein).

local M = {}

--- Optional: configure Rein (merged over `vim.g.rein`). Takes effect for
--- servers started afterwards; running ones get the new settings.
function M.setup(opts)
  local config = require('rein.config')
  config.set(opts or {})
  -- Re-resolve `lsp/rein.lua` with the new options.
  vim.lsp.config('rein', {})
  local enabled = config.get().enabled ~= false
  vim.lsp.enable('rein', enabled)
  if enabled then
    local settings = config.server_settings()
    for _, client in ipairs(vim.lsp.get_clients({ name = 'rein' })) do
      client.settings = { rein = settings }
      client:notify('workspace/didChangeConfiguration', { settings = client.settings })
    end
  end
end

--- The statusline component: what the current task is doing, or how it
--- ended; '' before the first task.
function M.status()
  return require('rein.progress').status()
end

--- Decide on the edit shown in the preview.
function M.accept()
  return require('rein.approval').accept()
end

function M.reject()
  return require('rein.approval').reject()
end

function M.accept_all()
  return require('rein.approval').accept_all()
end

--- Asks which of the edit's changes to keep, and applies those.
function M.keep_some()
  return require('rein.approval').keep_some()
end

--- Asks why, then rejects the edit; the model reads the reason.
function M.reject_with_reason()
  return require('rein.approval').reject_with_reason()
end

function M.review()
  return require('rein.approval').review()
end

--- The tasks of this session, by id (see rein.progress).
function M.tasks()
  return require('rein.progress').tasks
end

return M
