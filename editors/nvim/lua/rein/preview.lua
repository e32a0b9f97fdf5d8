-- The floating window that shows a proposed edit as a diff, with the keys to
-- decide on it. It only draws; `rein.approval` decides.

local buffers = require('rein.buffers')
local text = require('rein.text')

local M = {}

local KEYS =
  ' a accept · s keep some · r reject · R reject with reason · A accept all for this task · q hide '

local function diff(old, new)
  local fn = (vim.text and vim.text.diff) or vim.diff
  local ok, out = pcall(fn, old, new, { result_type = 'unified', ctxlen = 3 })
  if not ok or type(out) ~= 'string' then
    return {}
  end
  return vim.split(out, '\n', { plain = true, trimempty = true })
end

local WHY = 'Why: '
-- Continuation lines start blank: in a diff buffer a wrapped line that
-- began with "-", "+" or "@@" would read as part of the diff.
local INDENT = '     '

--- The model's reason for the edit (the annotation's description), as
--- "Why: …" wrapped to `width` cells, shown inert: it is the model's text.
function M.reason_lines(plan, width)
  if vim.trim(plan.description or '') == '' then
    return {}
  end
  local lines = {}
  for i, l in ipairs(text.wrap(plan.description, width - #WHY)) do
    table.insert(lines, (i == 1 and WHY or INDENT) .. l)
  end
  return lines
end

--- The diff lines for the files of a plan (see `edits.texts`).
function M.diff_lines(files)
  local lines = {}
  for _, f in ipairs(files) do
    local name = text.inert(buffers.display(f.uri))
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

--- The preview's lines: the reason wrapped to `width` (default 80), a blank
--- line, the diff.
function M.lines(plan, files, width)
  local lines = M.reason_lines(plan, width or 80)
  if #lines > 0 then
    table.insert(lines, '')
  end
  return vim.list_extend(lines, M.diff_lines(files))
end

local function title(plan, stale)
  local t = ' ' .. text.inert(plan.label) .. ' '
  if stale then
    t = t .. '· STALE: the file changed, accepting will be refused '
  end
  return t
end

--- Opens the preview; `keys` maps a key to the function it runs. Returns the
--- window and its buffer.
--- @return integer win, integer buf
function M.open(plan, files, keys, opts)
  local body = M.diff_lines(files)
  local width = vim.fn.strdisplaywidth(KEYS) + 2
  for _, l in ipairs(body) do
    width = math.max(width, vim.fn.strdisplaywidth(l) + 1)
  end
  -- A narrow diff does not squeeze the reason: it may widen the window to
  -- a readable 80 columns.
  local reason = vim.trim(plan.description or '')
  if reason ~= '' then
    width = math.max(width, math.min(80, #WHY + vim.fn.strdisplaywidth(text.inert(reason)) + 1))
  end
  local max_width = math.max(20, math.min(opts.max_width or 120, vim.o.columns - 4))
  width = math.min(width, max_width)
  local lines = M.lines(plan, files, width - 1)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'diff'
  vim.b[buf].rein_preview = true

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
