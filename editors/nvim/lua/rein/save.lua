-- `rein/saveDocuments {uris}`: before it runs tests, the server asks the
-- editor to write the modified buffers of the workspace (those it edited
-- and the user's), so the tests see exactly the text it verified.

local buffers = require('rein.buffers')

local M = {}

--- Writes one buffer like :write, without BufWritePre/FileWritePre: a
--- format-on-save hook would change the text the server is about to test.
--- BufWritePost still runs, so every LSP client gets its didSave.
local function write(bufnr)
  if not vim.bo[bufnr].modified then
    -- Nothing unsaved. If the disk differs anyway, it changed outside
    -- Neovim; writing over it would lose that, and the server reports it.
    return
  end
  if vim.bo[bufnr].buftype ~= '' then
    error('it is not a file buffer')
  end
  if vim.bo[bufnr].readonly then
    error("it is 'readonly'")
  end
  vim.api.nvim_buf_call(bufnr, function()
    local saved = vim.o.eventignore
    vim.o.eventignore = (saved == '' and '' or saved .. ',') .. 'BufWritePre,FileWritePre'
    local ok, err = pcall(vim.cmd, 'silent keepalt lockmarks write')
    vim.o.eventignore = saved
    if not ok then
      error(err, 0)
    end
  end)
end

--- The request handler: null when every buffer was written, else an LSP
--- error naming each one that was not and why.
function M.handler(_, params, _)
  if type(params) ~= 'table' or type(params.uris) ~= 'table' then
    return nil,
      vim.lsp.rpc_response_error(
        vim.lsp.protocol.ErrorCodes.InvalidParams,
        'rein/saveDocuments takes {uris: [...]}'
      )
  end
  local failures = {}
  for _, uri in ipairs(params.uris) do
    local bufnr = buffers.find(uri)
    local name = buffers.display(uri)
    if not bufnr or not vim.api.nvim_buf_is_loaded(bufnr) then
      table.insert(failures, name .. ': not open in Neovim')
    else
      local ok, err = pcall(write, bufnr)
      if not ok then
        table.insert(failures, ('%s: %s'):format(name, tostring(err)))
      end
    end
  end
  if #failures > 0 then
    return nil,
      vim.lsp.rpc_response_error(
        vim.lsp.protocol.ErrorCodes.RequestFailed,
        'Neovim could not save ' .. table.concat(failures, '; ')
      )
  end
  return vim.NIL
end

return M
