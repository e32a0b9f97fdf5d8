-- Rein's `workspace/applyEdit` handler. Neovim 0.11's own applies every
-- edit at once and answers `applied = true` even when it skipped a stale
-- one. This one shows each edit in a preview, waits for the user (the
-- handler runs in a coroutine, as Neovim's showMessageRequest handler
-- does), applies only if every buffer is still at the version the edit was
-- computed on, and answers honestly: `applied = false` on a reject, a stale
-- buffer or a failure, with the reason for the model.
--
-- Edits wait in a queue and are shown one at a time. "Accept all" accepts
-- the rest of that task's edits (by annotation label, which names the task).
-- "Keep some" asks about each change of a one-file edit and applies only
-- those kept, telling the server which (`reinKept`, the indices of the text
-- edits applied: the server confirms that text and tells the model what was
-- left out). "Reject with reason" asks why; the reason is the answer's
-- `failureReason`, which the model reads. "Edit" opens the proposal of a
-- one-file edit in a buffer of its own (`rein.preview`); `:w` there accepts
-- it as the user left it: Neovim applies that text instead and sends it
-- with the answer (`reinText`, the whole text: the server confirms exactly
-- that and tells the model what the user changed).
-- Edits the server marks `needsConfirmation = false` (the user allowed them
-- in the permissions) are applied without a preview, still version-checked.
--
-- An edit Rein no longer waits for is withdrawn: the server's
-- `$/cancelRequest` for it (its id from `rein.rpc`), or the end of its task,
-- closes its preview or drops it from the queue, and the user is told. Its
-- keys are tied to it, so a late `a` applies nothing.

local edits = require('rein.edits')
local lsp = require('rein.lsp')
local preview = require('rein.preview')
local rpc = require('rein.rpc')

local M = {}

local queue = {} --- @type table[] edits waiting, the first one shown
--- Labels accepted wholesale, and the task each belongs to (true: unknown).
local accept_all = {} --- @type table<string, string|true>

--- Decisions so far, oldest first: `{label, task_id, applied, reason, how}`.
--- For :Rein status and for tests.
M.history = {}

local DEFAULT_TIMEOUT_SECS = 600

local function notify(msg, level)
  vim.notify('Rein: ' .. msg, level or vim.log.levels.INFO)
end

local function emit()
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'ReinApproval', modeline = false })
  pcall(vim.cmd.redrawstatus)
end

--- How long an edit may wait: the server gives up after
--- `approvalTimeoutSecs` and the model reads the file again, so an edit
--- accepted later would land on text nobody expects. A second early, so the
--- server hears "not applied" rather than nothing.
local function timeout_ms()
  local settings = require('rein.config').get().settings or {}
  local secs = tonumber(settings.approvalTimeoutSecs) or DEFAULT_TIMEOUT_SECS
  return math.max(0, secs * 1000 - 1000)
end

--- `edits.check`, never throwing.
local function check(plan)
  local ran, ok, reason = pcall(edits.check, plan)
  if not ran then
    return false, 'Neovim could not check the edit: ' .. tostring(ok)
  end
  return ok, reason
end

--- Applies `item`'s plan, or `plan` (a part of it) when given.
local function try_apply(item, plan)
  local ok, reason = check(item.plan)
  if not ok then
    -- The server must see the user's change before it reads the answer.
    lsp.flush(item.client)
    return { applied = false, failureReason = reason }
  end
  local applied, err = pcall(edits.apply, plan or item.plan, item.client)
  -- The server confirms the edit by the didChange; send it now.
  lsp.flush(item.client)
  if not applied then
    return { applied = false, failureReason = 'Neovim could not apply the edit: ' .. tostring(err) }
  end
  return { applied = true }
end

--- Answers the server (once) and forgets the item. `err` (with a nil
--- `result`) answers with an LSP error instead.
local function respond(item, result, how, err)
  if item.done then
    return
  end
  item.done = true
  if item.timer then
    pcall(function()
      item.timer:stop()
      item.timer:close()
    end)
  end
  preview.close(item.win)
  item.win = nil
  if item.editor then
    -- What the user typed into a proposal that was not applied stays on
    -- screen for them to copy; otherwise the proposal closes.
    local kept = how ~= 'rejected'
      and not (result and result.applied)
      and item.editor:visible()
      and item.editor:text() ~= nil
    if kept then
      item.editor:keep(
        require('rein.text').inert(
          (result and result.failureReason) or (err and err.message) or how
        )
      )
    else
      item.editor:close()
    end
    item.editor = nil
  end
  for i, other in ipairs(queue) do
    if other == item then
      table.remove(queue, i)
      break
    end
  end
  table.insert(M.history, {
    label = item.plan.label,
    task_id = item.plan.task_id,
    applied = result ~= nil and result.applied or false,
    reason = result and result.failureReason or (err and err.message),
    how = how,
  })
  if item.resume then
    item.resume(result, err)
  end
  emit()
end

local show_next

--- The edit being decided on (the first in line), if any.
function M.current()
  return queue[1]
end

--- How many edits wait for a decision.
function M.pending()
  return #queue
end

--- Whether the current edit's proposal is being edited (`e`).
local function editing(item)
  return item ~= nil and item.editor ~= nil and item.editor:visible()
end

--- Whether the current edit is on screen: its preview, or its proposal
--- being edited.
function M.visible()
  local item = queue[1]
  return item ~= nil
    and ((item.win ~= nil and vim.api.nvim_win_is_valid(item.win)) or editing(item))
end

--- The longest reason the user's words may make (the model reads it).
local MAX_REASON = 2000

--- The user's reason as one inert line, at most MAX_REASON bytes (cut on a
--- character boundary).
local function user_reason(words)
  local line = require('rein.text').inert(vim.trim((words or ''):gsub('%s+', ' ')))
  if #line > MAX_REASON then
    line = line:sub(1, MAX_REASON + vim.str_utf_start(line, MAX_REASON + 1)) .. '…'
  end
  return line
end

--- The largest edited proposal Neovim sends (the server takes 16 MiB).
local MAX_EDITED = 16 * 1024 * 1024

--- `item`'s plan with its one file's new text replaced by `text` (the
--- proposal as the user edited it): one text edit over the whole file.
local function with_text(item, text)
  local plan = vim.deepcopy(item.plan)
  -- A position past the end of the file means its end.
  local whole = {
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 2147483647, character = 0 } },
    newText = text,
  }
  local placed = false
  for _, step in ipairs(plan.steps) do
    if not step.create then
      step.edits = placed and {} or { whole }
      placed = true
    end
  end
  if not placed then
    -- A new empty file the user wrote something into.
    table.insert(plan.steps, { uri = plan.steps[1].uri, edits = { whole } })
  end
  return plan
end

--- `text` as the server sees the buffer it went into (Neovim sends a
--- 'fileformat' dos buffer with CRLF line ends).
local function as_sent(item, text)
  local bufnr = require('rein.buffers').find(item.plan.steps[1].uri)
  if bufnr and vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].fileformat == 'dos' then
    return (text:gsub('\n', '\r\n'))
  end
  return text
end

--- Decides on `item` (default: the first in line). `opts.reason`: what the
--- user said with a rejection; `opts.kept`: the (1-based) text edits kept
--- of a one-file edit ('kept some'); `opts.text`: the file's text as the
--- user edited the proposal (an accept; false: as proposed). An accept
--- while the proposal is being edited accepts it as it is there.
local function decide(how, item, opts)
  opts = opts or {}
  if item and item.done then
    -- A key of a preview whose edit was withdrawn meanwhile.
    notify('that edit was withdrawn; nothing was applied', vim.log.levels.WARN)
    return false
  end
  item = item or queue[1]
  if not item then
    notify('no edit is waiting for approval', vim.log.levels.WARN)
    return false
  end
  local text = opts.text
  if text == nil and (how == 'accepted' or how == 'accepted all') and editing(item) then
    text = item.editor:text()
  end
  local result
  if text and #text > MAX_EDITED then
    notify(
      ('your version is %d bytes, more than Rein takes (%d): not accepted; the edit still waits'):format(
        #text,
        MAX_EDITED
      ),
      vim.log.levels.WARN
    )
    return false
  elseif text and how ~= 'rejected' then
    result = try_apply(item, with_text(item, text))
    if result.applied then
      result.reinText = as_sent(item, text)
      how = 'edited'
    else
      notify('your version was not applied: ' .. result.failureReason, vim.log.levels.WARN)
    end
  elseif how == 'rejected' then
    local words = user_reason(opts.reason)
    result = {
      applied = false,
      failureReason = words == '' and 'rejected in the Neovim preview'
        or ('rejected in the Neovim preview; the user said: ' .. words),
    }
  elseif how == 'kept some' then
    local plan = vim.deepcopy(item.plan)
    local step = plan.steps[1]
    local kept, indices = {}, {}
    for _, i in ipairs(opts.kept or {}) do
      table.insert(kept, step.edits[i])
      -- The server counts the edits it sent from 0.
      table.insert(indices, i - 1)
    end
    step.edits = kept
    result = try_apply(item, plan)
    if result.applied then
      result.reinKept = indices
    else
      notify('the edit was not applied: ' .. result.failureReason, vim.log.levels.WARN)
    end
  else
    result = try_apply(item)
    if not result.applied then
      notify('the edit was not applied: ' .. result.failureReason, vim.log.levels.WARN)
    end
  end
  respond(item, result, how)
  show_next()
  return result.applied
end

--- Accepts the edit on screen (or first in line).
function M.accept()
  return decide('accepted')
end

--- Rejects it: the model is told and tries another way.
function M.reject()
  return decide('rejected')
end

--- Accepts it and every later edit of the same task.
function M.accept_all(item)
  if item and item.done then
    return decide('accepted all', item)
  end
  item = item or queue[1]
  if item then
    accept_all[item.plan.label] = item.plan.task_id or true
  end
  return decide('accepted all', item)
end

--- Rejects the edit after asking why (`vim.ui.input`); the model reads the
--- answer. Cancelling the question leaves the edit waiting.
function M.reject_with_reason(item)
  item = item or queue[1]
  if not item then
    notify('no edit is waiting for approval', vim.log.levels.WARN)
    return
  end
  vim.ui.input({ prompt = 'Reject: why, or what should Rein do instead? ' }, function(words)
    if words == nil then
      notify('not rejected; the edit still waits (:Rein review)')
      return
    end
    decide('rejected', item, { reason = words })
  end)
end

--- The changes of a one-file edit, one per text edit (the server sends one
--- per changed region), as `{label}` for the user's choice; nil for an
--- edit that is not one file's text edits.
function M.changes(item)
  local steps = item.plan.steps
  if #steps ~= 1 or steps[1].create or #steps[1].edits < 2 then
    return nil
  end
  local ok, files = pcall(edits.texts, item.plan, item.client.offset_encoding)
  local old = ok and files[1] and vim.split(files[1].old, '\n', { plain = true }) or {}
  local inert = require('rein.text').inert
  local function cut(line)
    line = inert(vim.trim(line or ''))
    return #line > 60 and (line:sub(1, 58 + vim.str_utf_start(line, 59)) .. '…') or line
  end
  local out = {}
  for i, e in ipairs(steps[1].edits) do
    local first = e.range.start.line
    local removed = e.range['end'].line > first or e.range['end'].character > e.range.start.character
    local parts = {}
    if removed and old[first + 1] then
      table.insert(parts, '− ' .. cut(old[first + 1]))
    end
    if e.newText ~= '' then
      table.insert(parts, '+ ' .. cut(vim.split(e.newText, '\n', { plain = true })[1]))
    end
    local where = ('change %d of %d (line %d)'):format(i, #steps[1].edits, first + 1)
    table.insert(out, { label = where .. ': ' .. table.concat(parts, '  ') })
  end
  return out
end

--- Keeps some of the edit's changes: asks about each (`vim.ui.select`),
--- then applies those kept. Keeping all accepts it; keeping none rejects it.
--- Cancelling a question leaves the edit waiting.
function M.keep_some(item)
  item = item or queue[1]
  if not item then
    notify('no edit is waiting for approval', vim.log.levels.WARN)
    return
  end
  if editing(item) and item.editor:text() then
    -- Its changes are Rein's: keeping some would drop what the user typed.
    notify('you edited the proposal: accept it there (:w), or drop your changes (:q!) first')
    return
  end
  local changes = M.changes(item)
  if not changes then
    notify('this edit is one change: accept (a) or reject (r) it')
    return
  end
  local kept = {}
  local function ask(i)
    if item.done then
      notify('that edit was withdrawn; nothing was applied', vim.log.levels.WARN)
      return
    end
    if i > #changes then
      if #kept == 0 then
        decide('rejected', item, { reason = 'I kept none of the changes' })
      elseif #kept == #changes then
        decide('accepted', item)
      else
        decide('kept some', item, { kept = kept })
      end
      return
    end
    vim.ui.select({ 'Keep', 'Leave out' }, { prompt = 'Rein: ' .. changes[i].label }, function(choice)
      if choice == nil then
        notify('nothing decided; the edit still waits (:Rein review)')
        return
      end
      if choice == 'Keep' then
        table.insert(kept, i)
      end
      ask(i + 1)
    end)
  end
  ask(1)
end

--- Hides the preview; the edit keeps waiting (:Rein review shows it again).
function M.hide()
  local item = queue[1]
  if item then
    preview.close(item.win)
    item.win = nil
    notify('an edit is waiting for your approval: :Rein review')
  end
  emit()
end

--- Shows the edit waiting for a decision again (or its proposal, when it
--- is being edited).
function M.review()
  local item = queue[1]
  if not item then
    notify('no edit is waiting for approval')
    return
  end
  if editing(item) then
    item.editor:focus()
    return
  end
  if M.visible() then
    vim.api.nvim_set_current_win(item.win)
    return
  end
  show_next()
end

--- Opens the proposal of a one-file edit in a buffer to edit before
--- accepting it (the preview's `e`): `:w` there accepts it as it is;
--- closing it without (`:q!`) shows the preview again, the edit waiting.
function M.edit(item)
  item = item or queue[1]
  if not item then
    notify('no edit is waiting for approval', vim.log.levels.WARN)
    return
  end
  if item.done then
    notify('that edit was withdrawn; nothing was applied', vim.log.levels.WARN)
    return
  end
  if editing(item) then
    item.editor:focus()
    return
  end
  local ok, files = pcall(edits.texts, item.plan, item.client.offset_encoding)
  if not ok then
    notify('could not read the edit: ' .. tostring(files), vim.log.levels.ERROR)
    return
  end
  if #files ~= 1 then
    notify('this edit changes several files: accept (a) or reject (r) it')
    return
  end
  preview.close(item.win)
  item.win = nil
  local editor
  local opened, made = pcall(preview.edit, files[1], {
    can_accept = function(text)
      return not item.done and not (text and #text > MAX_EDITED) and check(item.plan)
    end,
    write = function(text)
      decide('accepted', item, { text = text or false })
    end,
    closed = function()
      if item.editor == editor then
        item.editor = nil
      end
      if not item.done then
        notify('closed without accepting; the edit still waits')
        show_next()
      end
    end,
  }, { stale = item.stale })
  if not opened then
    notify('could not open the proposal: ' .. tostring(made), vim.log.levels.ERROR)
    show_next()
    return
  end
  editor = made
  item.editor = editor
  emit()
end

local function open(item)
  local opts = vim.deepcopy(require('rein.config').get().preview or {})
  -- Never take the focus from someone typing: their next keys would land
  -- in the preview. They get a notification and :Rein review instead.
  local mode = vim.api.nvim_get_mode().mode
  if mode:match('^[icRt]') then
    opts.focus = false
    notify('an edit waits for your approval: :Rein review')
  end
  -- Tied to this edit: a key that comes after it was withdrawn must not
  -- decide on the next one.
  local keys = {
    a = function()
      decide('accepted', item)
    end,
    r = function()
      decide('rejected', item)
    end,
    R = function()
      M.reject_with_reason(item)
    end,
    s = function()
      M.keep_some(item)
    end,
    A = function()
      M.accept_all(item)
    end,
    e = function()
      M.edit(item)
    end,
    q = M.hide,
    ['<Esc>'] = M.hide,
  }
  local ok, win = pcall(function()
    local files = edits.texts(item.plan, item.client.offset_encoding)
    return preview.open(item.plan, files, keys, opts)
  end)
  if not ok then
    notify('could not show the edit: ' .. tostring(win), vim.log.levels.ERROR)
    return
  end
  item.win = win
  if item.stale then
    preview.mark_stale(win, item.plan)
  end
  -- A window closed some other way leaves the edit waiting.
  vim.api.nvim_create_autocmd('WinClosed', {
    pattern = tostring(win),
    once = true,
    callback = function()
      if item.win == win then
        item.win = nil
        vim.schedule(emit)
      end
    end,
  })
end

--- Watches the buffers an edit is tied to, to mark its preview stale.
local function watch(item)
  for _, step in ipairs(item.plan.steps) do
    local bufnr = step.versioned and require('rein.buffers').find(step.uri)
    if bufnr and vim.api.nvim_buf_is_loaded(bufnr) then
      vim.api.nvim_buf_attach(bufnr, false, {
        on_lines = function()
          if item.done then
            return true
          end
          if not item.stale then
            item.stale = true
            vim.schedule(function()
              preview.mark_stale(item.win, item.plan)
              if item.editor then
                item.editor:mark_stale()
              end
            end)
          end
        end,
      })
    end
  end
end

show_next = function()
  while queue[1] do
    local item = queue[1]
    if accept_all[item.plan.label] then
      respond(item, try_apply(item), 'accepted all')
    else
      if not M.visible() then
        open(item)
      end
      break
    end
  end
  emit()
end

--- The files an edit changes, for messages.
local function files_of(item)
  local names = {}
  for _, step in ipairs(item.plan.steps) do
    local name = require('rein.text').inert(require('rein.buffers').display(step.uri))
    if not vim.list_contains(names, name) then
      table.insert(names, name)
    end
  end
  return table.concat(names, ', ')
end

--- Why a task's edits no longer matter, from its state ('cancelled', …).
local function ended_because(state)
  if state == 'cancelled' then
    return 'the task was cancelled'
  end
  return 'the task ended: ' .. tostring(state or 'over')
end

--- Drops the edits of a task that ended (their answer no longer matters,
--- and applying them later would surprise everyone); `state` is how it
--- ended.
function M.drop_task(task_id, state)
  local why = ended_because(state)
  for _, item in ipairs(vim.list_slice(queue)) do
    if item.plan.task_id == task_id then
      respond(item, { applied = false, failureReason = why }, 'dropped')
      notify(('Rein withdrew its edit to %s (%s)'):format(files_of(item), why))
    end
  end
  for label, task in pairs(accept_all) do
    if task == task_id then
      accept_all[label] = nil
    end
  end
  show_next()
end

--- `$/cancelRequest {id}`: the server no longer waits for that request.
--- The edit's preview closes (or it leaves the queue), and the user is
--- told why as far as Neovim knows it.
function M.on_cancel_request(_, params, ctx)
  local id = type(params) == 'table' and params.id or nil
  if id == nil or not ctx then
    return
  end
  for _, item in ipairs(vim.list_slice(queue)) do
    if item.request_id == id and item.client.id == ctx.client_id then
      local task = item.plan.task_id and require('rein.progress').tasks[item.plan.task_id]
      local why
      if task and (task.cancel_requested or task.state == 'cancelled') then
        why = 'the task was cancelled'
      elseif task and require('rein.progress').is_terminal(task.state) then
        why = ended_because(task.state)
      else
        why = 'no answer in time, or the task moved on'
      end
      respond(item, nil, 'withdrawn', {
        code = vim.lsp.protocol.ErrorCodes.RequestCancelled,
        message = 'withdrawn by the server',
      })
      notify(('Rein withdrew its edit to %s (%s)'):format(files_of(item), why))
      show_next()
      return
    end
  end
end

--- Drops every edit of a client that stopped.
function M.drop_client(client_id)
  for _, item in ipairs(vim.list_slice(queue)) do
    if item.client.id == client_id then
      respond(item, { applied = false, failureReason = 'the Rein server stopped' }, 'dropped')
    end
  end
  rpc.forget(client_id)
  show_next()
end

--- Forgets "accept all" choices (when no task runs any more).
function M.reset_accept_all()
  accept_all = {}
end

--- The `workspace/applyEdit` handler.
function M.handler(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return { applied = false, failureReason = 'the Rein client in Neovim is gone' }
  end
  -- First, whatever happens next: the ids are taken in order.
  local request_id = rpc.take(client.id, params)
  local ok, plan = pcall(edits.plan, params)
  if not ok then
    notify('could not read an edit from the server: ' .. tostring(plan), vim.log.levels.WARN)
    return { applied = false, failureReason = 'Neovim could not read this edit: ' .. tostring(plan) }
  end
  local item = { plan = plan, client = client, request_id = request_id }
  local fresh, stale_reason = check(plan)
  if not fresh then
    -- Already out of date: nothing to ask the user.
    lsp.flush(client)
    local result = { applied = false, failureReason = stale_reason }
    respond(item, result, 'stale')
    return result
  end
  if not plan.confirm or accept_all[plan.label] then
    local result = try_apply(item)
    respond(item, result, plan.confirm and 'accepted all' or 'allowed')
    return result
  end
  local co, is_main = coroutine.running()
  if not co or is_main then
    return { applied = false, failureReason = 'Neovim could not show this edit for approval' }
  end
  item.resume = function(result, answer_err)
    vim.schedule(function()
      local resumed, err = pcall(coroutine.resume, co, result, answer_err)
      if not resumed then
        notify('could not answer the server: ' .. tostring(err), vim.log.levels.ERROR)
      end
    end)
  end
  local ms = timeout_ms()
  item.timer = vim.uv.new_timer()
  item.timer:start(ms, 0, function()
    vim.schedule(function()
      if not item.done then
        notify('an edit waited too long for approval and was dropped', vim.log.levels.WARN)
        respond(
          item,
          { applied = false, failureReason = 'nobody decided on it in Neovim in time' },
          'expired'
        )
        show_next()
      end
    end)
  end)
  table.insert(queue, item)
  watch(item)
  show_next()
  local result, err = coroutine.yield()
  return result, err
end

return M
