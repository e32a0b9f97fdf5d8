-- :Rein show — a task in a buffer below, kept up to date while it runs:
-- `rein trace <id> --verbose` (each step, the model's words, the diffs,
-- the checks with what the tests printed), run again when the task's
-- status changes (at most every RERENDER_MS, on the `User ReinStatus`
-- event) and once more when it ends. While the cursor is on the last
-- line the window follows the end.

local M = {}

local RERENDER_MS = 750

local function notify(msg, level)
  vim.notify('Rein: ' .. msg, level or vim.log.levels.INFO)
end

local function lines_of(text)
  text = (text or ''):gsub('\27%[[%d;]*m', '')
  return vim.split(text, '\n', { plain = true, trimempty = true })
end

--- The buffer showing `id`, if any.
local function buffer_of(id)
  local buf = vim.fn.bufnr('rein://task/' .. id)
  return buf > 0 and vim.api.nvim_buf_is_valid(buf) and buf or nil
end

--- Puts `lines` in `buf`; windows whose cursor was on the last line stay
--- on the (new) last line.
local function set_lines(buf, lines)
  local last = vim.api.nvim_buf_line_count(buf)
  local following = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    following[win] = vim.api.nvim_win_get_cursor(win)[1] >= last
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  for win, follow in pairs(following) do
    if follow and vim.api.nvim_win_is_valid(win) then
      pcall(vim.api.nvim_win_set_cursor, win, { #lines, 0 })
    end
  end
end

local rendering = {} --- @type table<string, 'busy'|'again'>

--- Runs `rein trace` for `id` and shows it, if its buffer is still there.
local function render(id, root)
  if rendering[id] then
    rendering[id] = 'again'
    return
  end
  local bin, err = require('rein.config').binary()
  if not bin then
    notify(err, vim.log.levels.ERROR)
    return
  end
  rendering[id] = 'busy'
  local argv = { bin, 'trace', id, '--verbose', '--workspace', root }
  local ok = pcall(vim.system, argv, { text = true, cwd = root, env = { NO_COLOR = '1' } }, function(result)
    vim.schedule(function()
      local again = rendering[id] == 'again'
      rendering[id] = nil
      local buf = buffer_of(id)
      if not buf then
        return
      end
      if result.code == 0 then
        set_lines(buf, lines_of(result.stdout))
      elseif vim.api.nvim_buf_line_count(buf) <= 1 then
        -- Before the task's first step there is no trace yet.
        set_lines(buf, { 'The task has not written its first step yet.', vim.trim(result.stderr or '') })
      end
      if again then
        render(id, root)
      end
    end)
  end)
  if not ok then
    rendering[id] = nil
    notify('could not run rein trace', vim.log.levels.ERROR)
  end
end

--- Opens (or shows again) the live buffer of task `id` in `root`.
function M.show(id, root)
  local buf = buffer_of(id)
  if buf then
    local win = vim.fn.win_findbuf(buf)[1]
    if win then
      vim.api.nvim_set_current_win(win)
    else
      vim.cmd('botright sbuffer ' .. buf)
    end
  else
    buf = require('rein.trace').scratch('rein://task/' .. id, { 'Reading the task…' })
    local group = vim.api.nvim_create_augroup('rein.live.' .. id, { clear = true })
    local timer = nil
    vim.api.nvim_create_autocmd('User', {
      group = group,
      pattern = 'ReinStatus',
      callback = function(ev)
        if type(ev.data) ~= 'table' or ev.data.task_id ~= id or timer then
          return
        end
        timer = vim.defer_fn(function()
          timer = nil
          render(id, root)
        end, RERENDER_MS)
      end,
    })
    vim.api.nvim_create_autocmd('BufWipeout', {
      group = group,
      buffer = buf,
      once = true,
      callback = function()
        pcall(vim.api.nvim_del_augroup_by_id, group)
      end,
    })
  end
  render(id, root)
  return buf
end

return M
