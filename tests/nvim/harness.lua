-- Helpers for the Neovim end-to-end cases (tests/nvim/cases/*.lua), run by
-- tests/nvim.rs as `nvim --headless --clean -l case.lua` in a copy of a
-- fixture project. A case waits on conditions (never on durations), and on
-- any failure prints what it saw (notifications, :messages, the status
-- line, the tasks, the approvals) and exits 1; tests/nvim.rs adds the
-- server's stderr from Neovim's LSP log.

local H = {}

local TIMEOUT_MS = 60000

--- Every vim.notify, in order: what the user would have seen.
H.notes = {}
vim.notify = function(msg, level)
  table.insert(H.notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end

local function inspect(v)
  return vim.inspect(v, { newline = '\n', indent = '  ' })
end

--- What the case saw, for a failure report.
function H.report()
  local out = {}
  local function add(title, body)
    table.insert(out, '----- ' .. title .. ' -----')
    table.insert(out, body)
  end
  local notes = {}
  for _, n in ipairs(H.notes) do
    table.insert(notes, ('[%s] %s'):format(vim.log.levels[n.level] or tostring(n.level), n.msg))
  end
  add('notifications', table.concat(notes, '\n'))
  local ok, messages = pcall(vim.api.nvim_exec2, 'messages', { output = true })
  add(':messages', ok and messages.output or tostring(messages))
  if package.loaded['rein.progress'] then
    add('status line', require('rein').status())
    add('tasks', inspect(require('rein.progress').tasks))
  end
  if package.loaded['rein.approval'] then
    add('approvals', inspect(require('rein.approval').history))
  end
  local bufs = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    table.insert(
      bufs,
      ('%d %s loaded=%s modified=%s'):format(
        b,
        vim.api.nvim_buf_get_name(b),
        tostring(vim.api.nvim_buf_is_loaded(b)),
        tostring(vim.bo[b].modified)
      )
    )
  end
  add('buffers', table.concat(bufs, '\n'))
  return table.concat(out, '\n')
end

--- Fails the case: the report on stderr, exit code 1.
function H.fail(msg)
  io.stderr:write('\nCASE FAILED: ' .. tostring(msg) .. '\n' .. debug.traceback('', 2) .. '\n')
  io.stderr:write(H.report() .. '\n')
  io.stderr:flush()
  os.exit(1)
end

function H.check(cond, msg)
  if not cond then
    H.fail(msg)
  end
  return cond
end

function H.eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    H.fail(('%s:\n  expected %s\n  got      %s'):format(what, inspect(expected), inspect(actual)))
  end
end

function H.contains(text, part, what)
  if type(text) ~= 'string' or not text:find(part, 1, true) then
    H.fail(('%s: %s does not contain %s'):format(what, inspect(text), inspect(part)))
  end
end

--- Waits until `cond()` is true (errors count as false); fails after a
--- generous hang guard.
function H.wait(what, cond, timeout)
  local ok = vim.wait(timeout or TIMEOUT_MS, function()
    local fine, v = pcall(cond)
    return fine and v
  end, 20)
  if not ok then
    H.fail('timed out waiting for ' .. what)
  end
end

--- The project's file as it is on disk.
function H.disk(rel)
  local f = assert(io.open(rel, 'rb'))
  local text = f:read('*a')
  f:close()
  return text
end

--- A buffer's text as Neovim would write it.
function H.text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')
    .. (vim.bo[bufnr].eol and '\n' or '')
end

function H.client()
  return vim.lsp.get_clients({ name = 'rein' })[1]
end

--- Opens a file of the project (in a new window with `split`) and waits
--- for Rein to attach to it.
function H.open(rel, split)
  vim.cmd((split and 'split ' or 'edit ') .. vim.fn.fnameescape(rel))
  local bufnr = vim.api.nvim_get_current_buf()
  H.wait('Rein to attach to ' .. rel, function()
    local c = vim.lsp.get_clients({ name = 'rein', bufnr = bufnr })[1]
    return c and c.initialized
  end)
  return bufnr
end

--- The buffer of a project file, if one is loaded.
function H.buffer(rel)
  local path = vim.fn.fnamemodify(rel, ':p')
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == path and vim.api.nvim_buf_is_loaded(b) then
      return b
    end
  end
  return nil
end

--- The task the status line is about.
function H.task()
  return require('rein.progress').current()
end

--- Waits for the current task to reach one of `states`; returns it.
function H.wait_state(states, timeout)
  local set = {}
  for _, s in ipairs(states) do
    set[s] = true
  end
  H.wait('a task in state ' .. table.concat(states, '|'), function()
    local t = H.task()
    -- A task waiting for a review or an approval is still running: it
    -- is not what a case waiting for 'waiting_user' (a question) means.
    local mid_run = t and t.waiting_for and t.waiting_for.kind ~= 'answer'
    return t and set[t.state] and not mid_run
  end, timeout)
  return H.task()
end

--- Waits until an edit preview is on screen; returns its window and lines.
function H.wait_preview(count)
  local approval = require('rein.approval')
  H.wait('edit preview #' .. tostring(count or 1), function()
    return approval.visible() and #approval.history == (count or 1) - 1
  end)
  local win = approval.current().win
  local buf = vim.api.nvim_win_get_buf(win)
  return win, vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

--- Types keys as the user would (mappings apply), to completion.
function H.keys(keys)
  vim.api.nvim_feedkeys(vim.keycode(keys), 'mx', false)
end

--- A scratch buffer by name prefix (trace, verification), once it exists.
function H.wait_scratch(prefix)
  local found
  H.wait('a buffer named ' .. prefix .. '…', function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.startswith(vim.api.nvim_buf_get_name(b), prefix) then
        found = b
        return true
      end
    end
  end)
  return table.concat(vim.api.nvim_buf_get_lines(found, 0, -1, false), '\n')
end

--- Whether some notification contains `part`.
function H.notified(part)
  for _, n in ipairs(H.notes) do
    if n.msg:find(part, 1, true) then
      return true
    end
  end
  return false
end

--- Ends a passing case: stops the servers (a clean shutdown) and says so.
function H.pass()
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop()
  end
  vim.wait(10000, function()
    return #vim.lsp.get_clients() == 0
  end, 20)
  io.stdout:write('REIN-NVIM-PASS\n')
  io.stdout:flush()
end

--- Runs a case body; any Lua error fails the case with the report.
function H.run(body)
  local ok, err = xpcall(body, debug.traceback)
  if not ok then
    H.fail(err)
  end
  H.pass()
end

return H
