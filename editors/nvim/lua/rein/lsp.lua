-- The `rein` LSP client: its configuration for vim.lsp.config (capabilities,
-- handlers, settings), and helpers to find the client and run its commands.

local M = {}

M.name = 'rein'

local notified_missing = false
local warned_rpc = false

--- The project root of a buffer: the nearest folder with a root marker,
--- else the current directory when the file is inside it.
local function root_dir(markers)
  return function(bufnr, on_dir)
    local root = vim.fs.root(bufnr, markers)
    if not root then
      local name = vim.api.nvim_buf_get_name(bufnr)
      local cwd = vim.fs.normalize(vim.fn.getcwd())
      if name ~= '' and vim.startswith(vim.fs.normalize(name), cwd .. '/') then
        root = cwd
      end
    end
    if root then
      on_dir(root)
    end
  end
end

--- What a client must advertise for Rein: versioned edits with change
--- annotations (so each edit is tied to the buffer version it was computed
--- on and marked for confirmation), file creation, rein/saveDocuments, an
--- instruction prompt for "Ask Rein…" (`commands.ask_action`), and
--- `confirmsEdits`: approval.lua shows every edit marked needsConfirmation
--- before applying it, so the server need not ask first.
function M.capabilities()
  return {
    workspace = {
      workspaceEdit = {
        documentChanges = true,
        resourceOperations = { 'create' },
        changeAnnotationSupport = { groupsOnLabel = true },
        failureHandling = 'abort',
      },
      configuration = true,
      -- The failing tests changed: ask for "▶ Fix with Rein" again.
      codeLens = { refreshSupport = true },
    },
    window = { workDoneProgress = true },
    -- "Fix this error with Rein" on an error Rein cannot check comes
    -- greyed, with the reason (`:Rein fix` says it).
    textDocument = { codeAction = { disabledSupport = true } },
    experimental = {
      rein = { saveDocuments = true, instructionPrompt = true, confirmsEdits = true },
    },
  }
end

--- The handlers Rein needs that Neovim's defaults get wrong or lack.
function M.handlers()
  local progress = require('rein.progress')
  return {
    ['workspace/applyEdit'] = require('rein.approval').handler,
    -- Rein withdrawing an edit it no longer waits for.
    ['$/cancelRequest'] = require('rein.approval').on_cancel_request,
    ['rein/saveDocuments'] = require('rein.save').handler,
    ['rein/taskStatus'] = progress.on_task_status,
    ['rein/verification'] = progress.on_verification,
    ['window/showMessage'] = progress.on_show_message,
    ['workspace/codeLens/refresh'] = require('rein.lenses').on_refresh,
  }
end

--- The configuration for vim.lsp.config('rein'); `lsp/rein.lua` returns it.
function M.config()
  local config = require('rein.config')
  local opts = config.get()
  local cmd, err = config.cmd()
  if not cmd then
    if not notified_missing then
      notified_missing = true
      vim.schedule(function()
        vim.notify('Rein: ' .. err .. ' (see :checkhealth rein)', vim.log.levels.ERROR)
      end)
    end
    -- Not executable: Neovim declines to start it instead of failing loudly
    -- on every buffer; the message above says why.
    cmd = { 'rein', 'lsp' }
  end
  local settings, settings_err = config.server_settings()
  if settings_err then
    vim.schedule(function()
      vim.notify('Rein: ' .. settings_err, vim.log.levels.WARN)
    end)
  end
  require('rein.progress').setup()
  require('rein.lenses').setup()
  return {
    cmd = cmd,
    filetypes = opts.filetypes,
    root_dir = root_dir(opts.root_markers),
    capabilities = M.capabilities(),
    handlers = M.handlers(),
    -- Commands a lens or `vim.lsp.buf.code_action()` runs: the words come
    -- from the user, a fix first checks there is a model.
    commands = {
      ['rein.runTask'] = require('rein.commands').ask_action,
      ['rein.fixTest'] = require('rein.commands').fix_command,
      ['rein.fixError'] = require('rein.commands').fix_command,
    },
    init_options = settings,
    settings = { rein = settings },
    -- Before any task can start: the ids of its edits must be known to
    -- match a withdrawal (`rein.rpc`).
    on_init = function(client)
      if not require('rein.rpc').watch(client) and not warned_rpc then
        warned_rpc = true
        vim.notify(
          'Rein: this Neovim hides the ids of server requests, so an edit Rein withdraws '
            .. 'stays on screen until its task ends',
          vim.log.levels.WARN
        )
      end
    end,
    on_exit = function(_, _, client_id)
      vim.schedule(function()
        require('rein.approval').drop_client(client_id)
      end)
    end,
  }
end

--- Whether a client is Rein's.
function M.is_rein(client)
  return client ~= nil and client.name == M.name
end

--- The Rein client of a buffer, else the only Rein client running.
--- @return vim.lsp.Client?, string?
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local attached = vim.lsp.get_clients({ bufnr = bufnr, name = M.name })
  if attached[1] then
    return attached[1]
  end
  local all = vim.lsp.get_clients({ name = M.name })
  if #all == 1 then
    return all[1]
  end
  if #all == 0 then
    return nil,
      'Rein is not running: open a file of your project (' .. table.concat(
        require('rein.config').get().filetypes,
        ', '
      ) .. '), or see :checkhealth rein'
  end
  return nil, 'several Rein servers are running: run this from a buffer of the project you mean'
end

--- Runs one of the server's commands (`rein.fixTest`, …) with its single
--- object argument; `on_result(result)` on success, errors are shown.
function M.execute(client, command, argument, on_result, bufnr)
  client:request('workspace/executeCommand', {
    command = command,
    arguments = { argument },
  }, function(err, result)
    if err then
      vim.notify(
        ('Rein: %s failed: %s'):format(command, err.message or vim.inspect(err)),
        vim.log.levels.ERROR
      )
      return
    end
    if on_result then
      on_result(result)
    end
  end, bufnr)
end

--- Sends pending didChange notifications now (Neovim batches them): the
--- server must see the buffer as it is before it reads our answer.
function M.flush(client)
  local ok, changetracking = pcall(require, 'vim.lsp._changetracking')
  if ok and type(changetracking.flush) == 'function' then
    pcall(changetracking.flush, client)
  end
end

return M
