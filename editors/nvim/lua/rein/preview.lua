-- The floating window that shows a proposed edit as a diff, with the keys to
-- decide on it. It only draws; `rein.approval` decides.

local buffers = require('rein.buffers')

local M = {}

local KEYS = ' a accept · r reject · A accept all for this task · q hide '

local function diff(old, new)
  local fn = (vim.text and vim.text.diff) or vim.diff
  local ok, out = pcall(fn, old, new, { result_type = 'unified', ctxlen = 3 })
  if not ok or type(out) ~= 'string' then
    return {}
  end
  return vim.split(out, '\n', { plain = true, trimempty = true })
end

--- The preview's lines for the files of a plan (see `edits.texts`).
function M.lines(plan, files)
  local lines = {}
  if plan.description ~= '' then
    for _, l in ipairs(vim.split(plan.description, '\n', { plain = true })) do
      table.insert(lines, '# ' .. l)
    end
  end
  for _, f in ipairs(files) do
    local name = buffers.display(f.uri)
    if f.created then
      table.insert(lines, '--- /dev/null')
    else
      table.insert(lines, '--- a/' .. name)
    end
    table.insert(lines, '+++ b/' .. name)
    local hunks = diff(f.old, f.new)
    if #hunks == 0 then
      table.insert(lines, f.created and '(new empty file)' or '(no change)')
    end
    vim.list_extend(lines, hunks)
  end
  return lines
end

local function title(plan, stale)
  local t = ' ' .. plan.label .. ' '
  if stale then
    t = t .. '· STALE: the file changed, accepting will be refused '
  end
  return t
end

--- Opens the preview; `keys` maps a key to the function it runs. Returns the
--- window and its buffer.
--- @return integer win, integer buf
function M.open(plan, files, keys, opts)
  local lines = M.lines(plan, files)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'diff'
  vim.b[buf].rein_preview = true

  local width = #KEYS + 2
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l) + 1)
  end
  local max_width = math.max(20, math.min(opts.max_width or 120, vim.o.columns - 4))
  width = math.min(width, max_width)
  local height = math.max(1, math.min(#lines, vim.o.lines - 6))
  local win = vim.api.nvim_open_win(buf, opts.focus ~= false, {
    relative = 'editor',
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    width = width,
    height = height,
    style = 'minimal',
    border = opts.border or 'rounded',
    title = title(plan, false),
    title_pos = 'center',
    footer = KEYS,
    footer_pos = 'center',
  })
  vim.wo[win].wrap = false
  vim.wo[win].cursorline = true
  for lhs, fn in pairs(keys) do
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = 'Rein preview' })
  end
  return win, buf
end

--- Marks an open preview stale (its file changed under it).
function M.mark_stale(win, plan)
  if win and vim.api.nvim_win_is_valid(win) then
    pcall(vim.api.nvim_win_set_config, win, { title = title(plan, true), title_pos = 'center' })
  end
end

function M.close(win)
  if win and vim.api.nvim_win_is_valid(win) then
    pcall(vim.api.nvim_win_close, win, true)
  end
end

return M
