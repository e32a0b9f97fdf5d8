-- Showing what a task did: `rein trace <id>` (the text timeline in a
-- scratch buffer, or the HTML report opened with vim.ui.open) and the
-- verifier's evidence from `rein/verification`.

local M = {}

local function notify(msg, level)
  vim.notify('Rein: ' .. msg, level or vim.log.levels.INFO)
end

--- A read-only scratch buffer in a new split, named `name`.
function M.scratch(name, lines)
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.keymap.set('n', 'q', '<Cmd>close<CR>', { buffer = buf, nowait = true })
  return buf
end

local function lines_of(text)
  text = (text or ''):gsub('\27%[[%d;]*m', '')
  return vim.split(text, '\n', { plain = true, trimempty = true })
end

--- Runs `rein trace <id>` in `root`; `format` is 'text' (scratch buffer) or
--- 'html' (opened in the browser); default from the `trace` option.
function M.show(id, root, format)
  format = format or require('rein.config').get().trace or 'text'
  local bin, err = require('rein.config').binary()
  if not bin then
    notify(err, vim.log.levels.ERROR)
    return
  end
  local argv = { bin, 'trace', id, '--workspace', root }
  local html
  if format == 'html' then
    html = vim.fn.tempname() .. '-rein-' .. id .. '.html'
    vim.list_extend(argv, { '--html', html })
  end
  local ok, proc = pcall(vim.system, argv, { text = true, cwd = root }, function(result)
    vim.schedule(function()
      if result.code ~= 0 then
        notify(
          ('rein trace %s failed (exit %d): %s'):format(
            id,
            result.code,
            vim.trim(result.stderr or '')
          ),
          vim.log.levels.ERROR
        )
        return
      end
      if html then
        local opened, open_err = vim.ui.open(html)
        if not opened then
          notify(('the report is %s (could not open it: %s)'):format(html, tostring(open_err)))
        else
          notify('opened the report ' .. html)
        end
        return
      end
      M.scratch('rein://trace/' .. id, lines_of(result.stdout))
    end)
  end)
  if not ok then
    notify('could not run rein trace: ' .. tostring(proc), vim.log.levels.ERROR)
  end
end

--- The lines showing a `rein/verification` notification.
function M.verification_lines(v)
  local lines = {
    ('task %s: verification %s'):format(
      tostring(v.taskId),
      v.passed == true and 'passed' or 'FAILED'
    ),
  }
  if type(v.detail) == 'string' and v.detail ~= '' then
    vim.list_extend(lines, vim.split(v.detail, '\n', { plain = true }))
  end
  for _, e in ipairs(type(v.evidence) == 'table' and v.evidence or {}) do
    if type(e) == 'table' then
      table.insert(lines, '')
      table.insert(
        lines,
        ('%s: exit %s in %s ms'):format(
          tostring(e.check),
          tostring(e.exitCode),
          tostring(e.durationMs)
        )
      )
      table.insert(lines, '  $ ' .. tostring(e.command))
      if type(e.logPath) == 'string' then
        table.insert(lines, '  log: ' .. e.logPath)
      end
      for _, f in ipairs(type(e.files) == 'table' and e.files or {}) do
        if type(f) == 'table' then
          table.insert(
            lines,
            ('  %s  %s'):format(tostring(f.path), tostring(f.contentHash):sub(1, 16))
          )
        end
      end
      for _, failure in ipairs(type(e.failures) == 'table' and e.failures or {}) do
        table.insert(lines, '  failed: ' .. tostring(failure))
      end
    end
  end
  return lines
end

function M.show_verification(v)
  M.scratch('rein://verification/' .. tostring(v.taskId), M.verification_lines(v))
end

return M
