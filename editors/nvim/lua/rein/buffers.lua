-- Finding the buffer of a file URI without creating one, and opening one
-- when an edit needs it.

local M = {}

local function realpath(path)
  return vim.uv.fs_realpath(path) or path
end

--- The file path of a URI, or nil for a URI that is not a file.
function M.path(uri)
  if type(uri) ~= 'string' or not vim.startswith(uri, 'file:') then
    return nil
  end
  local ok, path = pcall(vim.uri_to_fname, uri)
  return ok and path or nil
end

--- The buffer holding a file, if there is one. Names are compared exactly,
--- then through symlinks (the server names files by their real path).
--- @return integer?
function M.find(uri)
  local path = M.path(uri)
  if not path then
    return nil
  end
  local real = nil
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(bufnr)
    if name == path then
      return bufnr
    end
  end
  real = realpath(path)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(bufnr)
    if name ~= '' and realpath(name) == real then
      return bufnr
    end
  end
  return nil
end

--- The buffer of a file, created and loaded if needed, and attached to the
--- client so the server sees its didOpen and every didChange.
--- @return integer
function M.open(uri, client)
  local bufnr = M.find(uri)
  if not bufnr then
    local path = M.path(uri)
    if not path then
      error('not a file URI: ' .. tostring(uri))
    end
    bufnr = vim.fn.bufadd(path)
  end
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
  end
  if client and not client.attached_buffers[bufnr] then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
  return bufnr
end

--- The lines of a file as they are now: its loaded buffer, else the disk
--- (nil for a file that does not exist).
--- @return string[]?, integer? bufnr
function M.lines(uri)
  local bufnr = M.find(uri)
  if bufnr and vim.api.nvim_buf_is_loaded(bufnr) then
    return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), bufnr
  end
  local path = M.path(uri)
  if path and vim.uv.fs_stat(path) then
    local ok, lines = pcall(vim.fn.readfile, path)
    if ok then
      return lines, nil
    end
  end
  return nil, nil
end

--- A path relative to the current directory, for messages.
function M.display(uri)
  local path = M.path(uri) or tostring(uri)
  return vim.fn.fnamemodify(path, ':~:.')
end

return M
