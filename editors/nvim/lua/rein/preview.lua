-- The floating window that shows a proposed edit as a diff, with the keys to
-- decide on it, and the proposal opened for editing (`e`). It only draws;
-- `rein.approval` decides.

local buffers = require('rein.buffers')
local edits = require('rein.edits')
local text = require('rein.text')

local M = {}

local KEYS =
  ' a accept · e edit · s keep some · r reject · R reject with reason · A accept all for this task · q hide '

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

--- Text made fit for a 'winbar': inert, and no `%` item (a file name is
--- shown as it is, never evaluated).
local function bar_text(t)
  return (text.inert(t):gsub('%%', '%%%%'))
end

--- `base`, or `base (2)`, … : a buffer name no buffer has yet.
local function free_name(base)
  local taken = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    taken[vim.api.nvim_buf_get_name(b)] = true
  end
  local name, n = base, 1
  while taken[name] do
    n = n + 1
    name = ('%s (%d)'):format(base, n)
  end
  return name
end

--- The filetype of the file at `uri`: its buffer's, else by its name only
--- (never by the proposal's text).
local function filetype_of(uri)
  local bufnr = buffers.find(uri)
  if bufnr and vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype ~= '' then
    return vim.bo[bufnr].filetype
  end
  local path = buffers.path(uri)
  local ok, ft = pcall(vim.filetype.match, { filename = path or '' })
  return ok and type(ft) == 'string' and ft or ''
end

--- A scratch buffer holding `lines` (the model's text: set through the
--- API, never read as a file, its modelines never looked at), named
--- `name`, with `ft`'s highlighting. `writable`: 'acwrite' (`:w` runs
--- Rein's BufWriteCmd), else read-only.
local function scratch(name, lines, ft, writable)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].modeline = false
  vim.bo[buf].swapfile = false
  vim.bo[buf].undofile = false
  vim.bo[buf].bufhidden = 'wipe'
  -- Not '' (a file): no language server attaches to it, Rein's included.
  vim.bo[buf].buftype = writable and 'acwrite' or 'nofile'
  vim.api.nvim_buf_set_name(buf, free_name(name))
  -- No undo step back to an empty buffer.
  vim.bo[buf].undolevels = -1
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].undolevels = vim.go.undolevels
  vim.bo[buf].modified = false
  vim.bo[buf].modifiable = writable
  if ft ~= '' then
    vim.bo[buf].filetype = ft
  end
  vim.b[buf].rein_proposal = true
  return buf
end

--- The first line (1-based) where two lists of lines differ.
local function first_change(old, new)
  for i = 1, math.max(#old, #new) do
    if old[i] ~= new[i] then
      return math.min(i, math.max(#new, 1))
    end
  end
  return 1
end

local Editor = {}
Editor.__index = Editor

local HINT = ':w accepts your version · :q! drops your changes (the edit still waits)'

--- Opens the proposal of one file (`file`: `{uri, old, new, created}`, see
--- `edits.texts`) in a tab page of its own, to edit before accepting it:
--- `rein://proposal/<path>` (editable, the file's filetype), beside
--- `rein://current/<path>` (the file as it is now, read-only) in diff
--- mode; a new file has the proposal only.
---
--- `:w` in the proposal calls `handlers.write(text)`, `text` being the
--- file's text as the user left it (nil: as proposed), once.
--- `handlers.can_accept(text)` false (the edit went stale, the text is too
--- large) leaves the buffer modified, so `:wq` does not wipe the user's
--- text. Closing the proposal otherwise calls `handlers.closed()`.
--- `opts.stale` marks it stale from the start.
function M.edit(file, handlers, opts)
  opts = opts or {}
  local name = text.inert(buffers.display(file.uri))
  local ft = filetype_of(file.uri)
  local new_lines, eol = edits.lines_of(file.new)
  local self = setmetatable({
    name = name,
    lines = new_lines,
    eol = eol,
    origin = vim.api.nvim_get_current_win(),
    handlers = handlers,
  }, Editor)
  self.buf = scratch('rein://proposal/' .. name, new_lines, ft, true)
  local old_lines = not file.created and (edits.lines_of(file.old)) or nil
  if old_lines then
    self.current = scratch('rein://current/' .. name, old_lines, ft, false)
  end
  -- Its own tab page: the user's windows stay as they are.
  vim.cmd('tab sbuffer ' .. tostring(self.current or self.buf))
  self.tab = vim.api.nvim_get_current_tabpage()
  if self.current then
    local left = vim.api.nvim_get_current_win()
    self.win = vim.api.nvim_open_win(self.buf, true, { split = 'right', win = left })
    vim.wo[left].winbar = bar_text('Rein: ' .. name .. ' as it is now')
    for _, win in ipairs({ left, self.win }) do
      vim.api.nvim_win_call(win, function()
        vim.cmd('diffthis')
      end)
    end
  else
    self.win = vim.api.nvim_get_current_win()
  end
  self:set_bar(opts.stale and 'STALE: the file changed, accepting will be refused' or nil)
  pcall(vim.api.nvim_win_set_cursor, self.win, { first_change(old_lines or {}, new_lines), 0 })

  self.group = vim.api.nvim_create_augroup('rein_proposal_' .. self.buf, { clear = true })
  vim.api.nvim_create_autocmd('BufWriteCmd', {
    group = self.group,
    buffer = self.buf,
    callback = function(ev)
      self:on_write(ev.match)
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = self.group,
    buffer = self.buf,
    callback = function()
      self:on_wipe()
    end,
  })
  return self
end

--- The proposal's winbar: the file, how to decide, and `note` if any.
function Editor:set_bar(note)
  if self.win and vim.api.nvim_win_is_valid(self.win) then
    local words = 'Rein: your version of ' .. self.name .. ' · ' .. (note or HINT)
    pcall(function()
      vim.wo[self.win].winbar = bar_text(words)
    end)
  end
end

--- Whether the proposal is on screen (in a window of any tab page).
function Editor:visible()
  return not self.gone and vim.api.nvim_buf_is_valid(self.buf) and #vim.fn.win_findbuf(self.buf) > 0
end

--- Goes to the proposal.
function Editor:focus()
  local wins = vim.fn.win_findbuf(self.buf)
  if wins[1] then
    vim.api.nvim_set_current_win(wins[1])
  end
end

--- The file's text as the user left it: nil when it is the proposal as
--- it came. Its final newline is the proposal's; an emptied buffer is an
--- empty file.
function Editor:text()
  if self.gone or not vim.api.nvim_buf_is_valid(self.buf) then
    return self.written_text
  end
  local lines = vim.api.nvim_buf_get_lines(self.buf, 0, -1, false)
  if vim.deep_equal(lines, self.lines) then
    return nil
  end
  if #lines == 1 and lines[1] == '' then
    return ''
  end
  return edits.text_of(lines, self.eol)
end

--- `:w`: a write to another file name is a copy, as `:write` makes one;
--- to its own name, it accepts.
function Editor:on_write(target)
  if target ~= vim.api.nvim_buf_get_name(self.buf) then
    local ok, err =
      pcall(vim.fn.writefile, vim.api.nvim_buf_get_lines(self.buf, 0, -1, false), target)
    vim.notify(
      ok and ('Rein: wrote a copy of the proposal to %s; :w alone accepts it'):format(target)
        or ('Rein: could not write %s: %s'):format(target, tostring(err)),
      ok and vim.log.levels.INFO or vim.log.levels.ERROR
    )
    return
  end
  if self.written then
    return
  end
  local t = self:text()
  if self.handlers.can_accept(t) then
    self.written, self.written_text = true, t
    vim.bo[self.buf].modified = false
  end
  -- Out of the autocommand: deciding opens and changes other buffers.
  vim.schedule(function()
    self.handlers.write(t)
  end)
end

--- The proposal closed by the user (`:q!`, or `:wq`).
function Editor:on_wipe()
  if self.gone then
    return
  end
  self.gone = true
  local here = vim.api.nvim_get_current_tabpage() == self.tab
  pcall(vim.api.nvim_del_augroup_by_id, self.group)
  vim.schedule(function()
    self:close_current()
    if here and vim.api.nvim_win_is_valid(self.origin) then
      pcall(vim.api.nvim_set_current_win, self.origin)
    end
    if not self.written then
      self.handlers.closed()
    end
  end)
end

function Editor:close_current()
  if self.current and vim.api.nvim_buf_is_valid(self.current) then
    pcall(vim.api.nvim_buf_delete, self.current, { force = true })
  end
end

--- Closes the proposal (after its edit was decided), its tab page with it,
--- back to the window it was opened from if the user is there. At once
--- (never called from its own autocommands): the next edit's preview
--- opens after it, and must not open in a tab page about to close.
function Editor:close()
  local here = vim.api.nvim_get_current_tabpage() == self.tab
  self.gone = true
  pcall(vim.api.nvim_del_augroup_by_id, self.group)
  self:close_current()
  if vim.api.nvim_buf_is_valid(self.buf) then
    pcall(vim.api.nvim_buf_delete, self.buf, { force = true })
  end
  if here and vim.api.nvim_win_is_valid(self.origin) then
    pcall(vim.api.nvim_set_current_win, self.origin)
  end
end

--- Keeps the user's text on screen after its edit ended without it
--- (stale, withdrawn): no longer a proposal (`:w` does nothing more), the
--- winbar says why.
function Editor:keep(why)
  self.gone = true
  pcall(vim.api.nvim_del_augroup_by_id, self.group)
  if not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  vim.bo[self.buf].buftype = 'nofile'
  vim.bo[self.buf].modified = false
  self:set_bar('NOT APPLIED (' .. why .. '): your text is kept here to copy; :q closes it')
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = self.buf,
    once = true,
    callback = function()
      vim.schedule(function()
        self:close_current()
      end)
    end,
  })
end

--- Marks the proposal stale (its file changed under it).
function Editor:mark_stale()
  if not self.gone then
    self:set_bar('STALE: the file changed, accepting will be refused')
  end
end

return M
