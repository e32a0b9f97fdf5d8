-- `:Rein undo [task]`: takes back a task's changes (`rein.undoTask`),
-- keeping what you typed since; the server edits the buffers and says how
-- it went (a message: what was undone, what was left as it is because you
-- changed the same lines). Without a task: the latest that ended in this
-- session, else the one you pick from those with a trace.

local lsp = require('rein.lsp')
local progress = require('rein.progress')

local M = {}

local ended = {
  succeeded = true,
  unverified = true,
  failed = true,
  cancelled = true,
  budget_exhausted = true,
}

local function notify(msg, level)
  vim.notify('Rein: ' .. msg, level or vim.log.levels.INFO)
end

--- The tasks of this session that ended, latest first.
function M.candidates()
  return vim.tbl_filter(function(t)
    return ended[t.state] == true
  end, progress.all())
end

local function send(id, task)
  local client = task and task.client_id and vim.lsp.get_client_by_id(task.client_id) or nil
  if not client then
    local err
    client, err = lsp.client()
    if not client then
      notify(err, vim.log.levels.ERROR)
      return
    end
  end
  lsp.execute(client, 'rein.undoTask', { taskId = id }, function(result)
    if type(result) == 'table' and result.undoing == true then
      notify('undoing ' .. ((task and task.title) or id) .. '…')
    end
  end)
end

--- :Rein undo [task]
function M.run(opts)
  local arg = opts and opts.rest or ''
  if arg ~= '' then
    send(arg, progress.tasks[arg])
    return
  end
  local latest = M.candidates()[1]
  if not latest then
    notify('no finished task to undo in this session; :Rein undo TASK_ID', vim.log.levels.WARN)
    return
  end
  send(latest.id, latest)
end

return M
