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
-- Edits the server marks `needsConfirmation = false` (the user allowed them
-- in the permissions) are applied without a preview, still version-checked.

local edits = require('rein.edits')
local lsp = require('rein.lsp')
local preview = require('rein.preview')

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

local function try_apply(item)
  local ok, reason = check(item.plan)
  if not ok then
    -- The server must see the user's change before it reads the answer.
    lsp.flush(item.client)
    return { applied = false, failureReason = reason }
  end
  local applied, err = pcall(edits.apply, item.plan, item.client)
  -- The server confirms the edit by the didChange; send it now.
  lsp.flush(item.client)
  if not applied then
    return { applied = false, failureReason = 'Neovim could not apply the edit: ' .. tostring(err) }
  end
  return { applied = true }
end

--- Answers the server (once) and forgets the item.
local function respond(item, result, how)
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
  for i, other in ipairs(queue) do
    if other == item then
      table.remove(queue, i)
      break
    end
  end
  table.insert(M.history, {
    label = item.plan.label,
    task_id = item.plan.task_id,
    applied = result.applied,
    reason = result.failureReason,
    how = how,
  })
  if item.resume then
    item.resume(result)
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

--- Whether the current edit's preview is on screen.
function M.visible()
  local item = queue[1]
  return item ~= nil and item.win ~= nil and vim.api.nvim_win_is_valid(item.win)
end

local function decide(how)
  local item = queue[1]
  if not item then
    notify('no edit is waiting for approval', vim.log.levels.WARN)
    return false
  end
  local result
  if how == 'rejected' then
    result = { applied = false, failureReason = 'rejected in the Neovim preview' }
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
function M.accept_all()
  local item = queue[1]
  if item then
    accept_all[item.plan.label] = item.plan.task_id or true
  end
  return decide('accepted all')
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

--- Shows the edit waiting for a decision again.
function M.review()
  local item = queue[1]
  if not item then
    notify('no edit is waiting for approval')
    return
  end
  if M.visible() then
    vim.api.nvim_set_current_win(item.win)
    return
  end
  show_next()
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
  local keys = {
    a = M.accept,
    r = M.reject,
    A = M.accept_all,
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

--- Drops the edits of a task that ended (their answer no longer matters,
--- and applying them later would surprise everyone).
function M.drop_task(task_id, why)
  for _, item in ipairs(vim.list_slice(queue)) do
    if item.plan.task_id == task_id then
      respond(item, { applied = false, failureReason = why or 'the task ended' }, 'dropped')
    end
  end
  for label, task in pairs(accept_all) do
    if task == task_id then
      accept_all[label] = nil
    end
  end
  show_next()
end

--- Drops every edit of a client that stopped.
function M.drop_client(client_id)
  for _, item in ipairs(vim.list_slice(queue)) do
    if item.client.id == client_id then
      respond(item, { applied = false, failureReason = 'the Rein server stopped' }, 'dropped')
    end
  end
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
  local ok, plan = pcall(edits.plan, params)
  if not ok then
    notify('could not read an edit from the server: ' .. tostring(plan), vim.log.levels.WARN)
    return { applied = false, failureReason = 'Neovim could not read this edit: ' .. tostring(plan) }
  end
  local item = { plan = plan, client = client }
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
  item.resume = function(result)
    vim.schedule(function()
      local resumed, err = pcall(coroutine.resume, co, result)
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
  return coroutine.yield()
end

return M
