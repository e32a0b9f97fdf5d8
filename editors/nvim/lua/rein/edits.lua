-- Workspace edits as Rein sends them: read (never trusting their shape),
-- checked against the buffers as they are now, turned into text, applied.
--
-- Edits are applied by computing the document's new text exactly as the
-- server does (LSP positions on the text Neovim sends it) and then setting
-- only the lines that differ. The server confirms an edit by the hash of the
-- text the next didChange shows, so "what Neovim would make of it" is not
-- good enough: `vim.lsp.util.apply_text_edits` adds a blank line for an
-- insertion at the end of a file, for one.

local buffers = require('rein.buffers')

local M = {}

local function is_int(v)
  return type(v) == 'number' and v >= 0 and v == math.floor(v)
end

local function check_position(p, what)
  if type(p) ~= 'table' or not is_int(p.line) or not is_int(p.character) then
    error(what .. ' is not a position')
  end
end

local function check_text_edit(e, i)
  if type(e) ~= 'table' or type(e.range) ~= 'table' or type(e.newText) ~= 'string' then
    error(('text edit %d has no range or newText'):format(i))
  end
  check_position(e.range.start, ('text edit %d start'):format(i))
  check_position(e.range['end'], ('text edit %d end'):format(i))
end

--- The bytes of a file on disk as text, nil if it cannot be read.
local function disk_text(path)
  if not path or not vim.uv.fs_stat(path) then
    return nil
  end
  local ok, lines = pcall(vim.fn.readfile, path, 'b')
  return ok and table.concat(lines, '\n') or nil
end

local function nil_if_null(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

--- Reads `ApplyWorkspaceEditParams` into a plan; errors (with a message) on
--- anything malformed. A plan is `{ label, description, confirm, task_id,
--- steps = { {uri, version?, edits} | {uri, create = options} } }`.
function M.plan(params)
  if type(params) ~= 'table' or type(params.edit) ~= 'table' then
    error('the request has no edit')
  end
  local edit = params.edit
  local annotations = type(edit.changeAnnotations) == 'table' and edit.changeAnnotations or {}
  local used = {} --- @type string[]
  local steps = {}

  local function note(id)
    id = nil_if_null(id)
    if id ~= nil then
      table.insert(used, tostring(id))
    end
  end

  local function text_edits(list, uri)
    if type(list) ~= 'table' then
      error('the edits of ' .. uri .. ' are not a list')
    end
    for i, e in ipairs(list) do
      check_text_edit(e, i)
      note(e.annotationId)
    end
    return list
  end

  local document_changes = nil_if_null(edit.documentChanges)
  if document_changes ~= nil then
    if type(document_changes) ~= 'table' then
      error('documentChanges is not a list')
    end
    for _, change in ipairs(document_changes) do
      if type(change) ~= 'table' then
        error('a document change is not an object')
      end
      local kind = nil_if_null(change.kind)
      if kind == 'create' then
        if not buffers.path(change.uri) then
          error('cannot create ' .. tostring(change.uri) .. ': not a file URI')
        end
        note(change.annotationId)
        local options = type(change.options) == 'table' and change.options or {}
        table.insert(steps, { uri = change.uri, create = options })
      elseif kind ~= nil then
        error(('Neovim (Rein) does not support %q changes'):format(tostring(kind)))
      else
        local doc = change.textDocument
        if type(doc) ~= 'table' or not buffers.path(doc.uri) then
          error('a text document edit has no file URI')
        end
        local version = nil_if_null(doc.version)
        if version ~= nil and not is_int(version) then
          error('the version of ' .. doc.uri .. ' is not a number')
        end
        table.insert(steps, {
          uri = doc.uri,
          version = version,
          versioned = version ~= nil,
          edits = text_edits(change.edits, doc.uri),
        })
      end
    end
  else
    local changes = nil_if_null(edit.changes)
    if type(changes) ~= 'table' then
      error('the edit has neither documentChanges nor changes')
    end
    for uri, list in pairs(changes) do
      if not buffers.path(uri) then
        error('cannot edit ' .. tostring(uri) .. ': not a file URI')
      end
      table.insert(steps, { uri = uri, edits = text_edits(list, uri) })
    end
  end
  if #steps == 0 then
    error('the edit changes nothing')
  end

  -- No annotation at all means the server did not ask; Rein always does, so
  -- the safe reading is "confirm".
  local confirm = #used == 0
  local label = type(params.label) == 'string' and params.label or nil
  local descriptions = {}
  local task_id = nil
  for _, id in ipairs(used) do
    local a = annotations[id]
    if type(a) ~= 'table' then
      confirm = true
    else
      if a.needsConfirmation == true then
        confirm = true
      end
      if not label and type(a.label) == 'string' then
        label = a.label
      end
      if type(a.description) == 'string' and not vim.list_contains(descriptions, a.description) then
        table.insert(descriptions, a.description)
      end
    end
    -- Rein names annotations `rein-<task id>-<n>`: which task an edit
    -- belongs to, so it can be dropped when that task ends.
    task_id = task_id or id:match('^rein%-(.+)%-%d+$')
  end
  return {
    label = label or 'Rein',
    description = table.concat(descriptions, '; '),
    confirm = confirm,
    task_id = task_id,
    steps = steps,
  }
end

--- The text of a document as Neovim sends it to servers: lines joined, a
--- final newline when 'eol' is set.
function M.text_of(lines, eol)
  return table.concat(lines, '\n') .. (eol and '\n' or '')
end

--- The lines of a text, and whether it ends with a newline.
function M.lines_of(text)
  if text == '' then
    return { '' }, true
  end
  local eol = text:sub(-1) == '\n'
  if eol then
    text = text:sub(1, -2)
  end
  return vim.split(text, '\n', { plain = true }), eol
end

--- Byte offset (0-based) of an LSP position in `text`, clamped: a line past
--- the end means the end, a character past the line's end means its end.
local function offset(text, line_starts, pos, encoding)
  local start = line_starts[pos.line + 1]
  if not start then
    return #text
  end
  local next_start = line_starts[pos.line + 2]
  local line_end = next_start and (next_start - 1) or #text
  local line = text:sub(start + 1, line_end)
  local ok, byte = pcall(vim.str_byteindex, line, encoding, pos.character, false)
  if not ok or type(byte) ~= 'number' then
    byte = #line
  end
  return start + math.min(byte, #line)
end

--- `text` with LSP text edits applied (positions in `encoding`).
function M.apply_to_text(text, list, encoding)
  local line_starts = { 0 }
  local nl = text:find('\n', 1, true)
  while nl do
    table.insert(line_starts, nl)
    nl = text:find('\n', nl + 1, true)
  end
  local spans = {}
  for i, e in ipairs(list) do
    local a = offset(text, line_starts, e.range.start, encoding)
    local b = offset(text, line_starts, e.range['end'], encoding)
    if b < a then
      a, b = b, a
    end
    table.insert(spans, { a = a, b = b, text = (e.newText:gsub('\r\n?', '\n')), i = i })
  end
  -- From the end backwards, so earlier offsets stay valid; inserts at one
  -- place keep their order.
  table.sort(spans, function(x, y)
    if x.a ~= y.a then
      return x.a > y.a
    end
    return x.i > y.i
  end)
  for _, s in ipairs(spans) do
    text = text:sub(1, s.a) .. s.text .. text:sub(s.b + 1)
  end
  return text
end

--- The text of a buffer, as the server sees it.
function M.buffer_text(bufnr)
  return M.text_of(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), vim.bo[bufnr].eol)
end

--- Replaces a buffer's text with `text`, setting only the lines that differ
--- (one change, one undo step; marks and cursors elsewhere stay put).
function M.set_buffer_text(bufnr, text)
  local old = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local new, eol = M.lines_of(text)
  local prefix = 0
  while prefix < #old and prefix < #new and old[prefix + 1] == new[prefix + 1] do
    prefix = prefix + 1
  end
  local suffix = 0
  while
    suffix < #old - prefix
    and suffix < #new - prefix
    and old[#old - suffix] == new[#new - suffix]
  do
    suffix = suffix + 1
  end
  if prefix ~= #old or prefix ~= #new then
    vim.api.nvim_buf_set_lines(
      bufnr,
      prefix,
      #old - suffix,
      false,
      vim.list_slice(new, prefix + 1, #new - suffix)
    )
  end
  if text ~= '' and vim.bo[bufnr].eol ~= eol then
    vim.bo[bufnr].eol = eol
  end
end

--- The files of a plan before and after, for the preview: a list of
--- `{uri, old, new, created}` (texts), one per file.
function M.texts(plan, encoding)
  local files, by_uri = {}, {}
  for _, step in ipairs(plan.steps) do
    local f = by_uri[step.uri]
    if not f then
      local old = ''
      local bufnr = buffers.find(step.uri)
      if bufnr and vim.api.nvim_buf_is_loaded(bufnr) then
        old = M.buffer_text(bufnr)
      else
        old = disk_text(buffers.path(step.uri)) or ''
      end
      f = { uri = step.uri, old = old, new = old, created = false }
      by_uri[step.uri] = f
      table.insert(files, f)
    end
    if step.create then
      -- A created file starts empty, whatever an empty buffer looks like.
      f.created = not vim.uv.fs_stat(buffers.path(step.uri) or '')
      f.old, f.new = '', ''
    else
      f.new = M.apply_to_text(f.new, step.edits, encoding)
    end
  end
  return files
end

--- Whether the plan still applies to the buffers as they are now. On `false`
--- the reason is written for the model (the server passes it on).
--- @return boolean, string?
function M.check(plan)
  local creating = {}
  for _, step in ipairs(plan.steps) do
    local path = buffers.path(step.uri) or step.uri
    local name = vim.fn.fnamemodify(path, ':~:.')
    local bufnr = buffers.find(step.uri)
    local loaded = bufnr and vim.api.nvim_buf_is_loaded(bufnr)
    if step.create then
      local exists = vim.uv.fs_stat(path) ~= nil
      if exists and not (step.create.overwrite or step.create.ignoreIfExists) then
        return false,
          ('%s already exists, so it was not created; read it and edit it instead'):format(name)
      end
      if loaded and vim.bo[bufnr].modified then
        return false,
          ('%s is open in Neovim with unsaved changes, so it was not created'):format(name)
      end
      creating[step.uri] = true
    elseif step.versioned then
      if not loaded then
        return false,
          ('%s was closed in Neovim since the edit was computed; read it again'):format(name)
      end
      local now = vim.lsp.util.buf_versions[bufnr]
      if now ~= step.version then
        return false,
          (
            '%s changed in Neovim while the edit waited (version %d, the edit was for version %d), '
            .. 'so it was not applied; read it again'
          ):format(name, now, step.version)
      end
    elseif loaded and not creating[step.uri] then
      -- No version: the server read the file from disk; the buffer must
      -- still hold exactly that.
      if vim.bo[bufnr].modified then
        return false,
          ('%s has unsaved changes in Neovim that Rein has not seen; read it again'):format(name)
      end
      local disk, text = disk_text(path), M.buffer_text(bufnr)
      if disk and disk ~= text and not (disk == '' and text == '\n') then
        return false, ('%s in Neovim differs from the file on disk; read it again'):format(name)
      end
    end
  end
  return true
end

--- Applies a checked plan through the buffers (so Neovim sends didOpen and
--- didChange as for typing). Files are opened and attached as needed.
function M.apply(plan, client)
  local created = {}
  for _, step in ipairs(plan.steps) do
    local path = assert(buffers.path(step.uri))
    if step.create then
      vim.fn.mkdir(vim.fs.dirname(path), 'p')
      if not vim.uv.fs_stat(path) then
        local file = assert(io.open(path, 'w'))
        file:close()
      end
      buffers.open(step.uri, client)
      created[step.uri] = true
    else
      local bufnr = buffers.open(step.uri, client)
      local base = M.buffer_text(bufnr)
      if created[step.uri] then
        -- LSP: a created file is empty (Neovim shows an empty buffer as "\n").
        base = ''
        created[step.uri] = nil
      end
      M.set_buffer_text(bufnr, M.apply_to_text(base, step.edits, client.offset_encoding))
    end
  end
end

return M
