-- "▶ Fix with Rein" above each test a task's run showed failing (the
-- server's textDocument/codeLens). Neovim shows lenses only when asked, so
-- this asks: when Rein attaches to a buffer, when the buffer is entered
-- again, and when the server says the failing tests changed
-- (workspace/codeLens/refresh). Running a lens (`vim.lsp.codelens.run()`)
-- goes through `commands.fix_command`, like `:Rein fix`.

local M = {}

local set_up = false

local function enabled()
  return require('rein.config').get().codelens ~= false
end

--- Asks for the lenses of `bufnr` (every attached server's: that is how
--- Neovim's codelens works).
local function refresh(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_is_loaded(bufnr) then
    pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
  end
end

--- The server's workspace/codeLens/refresh: the lenses of every buffer
--- Rein is attached to, asked for again.
function M.on_refresh(_, _, ctx)
  local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  if client and enabled() then
    vim.schedule(function()
      for bufnr in pairs(client.attached_buffers) do
        refresh(bufnr)
      end
    end)
  end
  return vim.NIL
end

--- Lenses in the buffers Rein attaches to (once per session).
function M.setup()
  if set_up then
    return
  end
  set_up = true
  local group = vim.api.nvim_create_augroup('rein.lenses', { clear = true })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if not require('rein.lsp').is_rein(client) or not enabled() then
        return
      end
      local bufnr = ev.buf
      vim.api.nvim_clear_autocmds({ group = group, buffer = bufnr })
      vim.api.nvim_create_autocmd('BufEnter', {
        group = group,
        buffer = bufnr,
        callback = function()
          refresh(bufnr)
        end,
      })
      refresh(bufnr)
    end,
  })
end

return M
