-- "Ask Rein": the model's answer (the final status's `summary`), shown in
-- full in a scratch buffer (Markdown, never run: each line inert), so a
-- long answer needs no Press-ENTER; a short notification says it came.

local text = require('rein.text')

local M = {}

--- Whether an ended task is an answer: an instruction or question that
--- ended with the model's words (no checks ran: the server says
--- "answered …").
function M.is_answer(t)
  return t.state == 'succeeded'
    and type(t.summary) == 'string'
    and t.summary:match('%S') ~= nil
    and require('rein.progress').ended_for(t, 'answered', '^answered')
end

--- The buffer's lines: the question, the answer as it is (each line inert:
--- no control characters reach the screen), and what it is.
function M.lines(t)
  local lines = { "# Rein's answer", '' }
  if t.title and t.title ~= '' then
    table.insert(lines, '> ' .. text.inert(t.title))
    table.insert(lines, '')
  end
  local body = tostring(t.summary or ''):gsub('\r\n', '\n')
  for _, line in ipairs(vim.split(body, '\n', { plain = true })) do
    table.insert(lines, text.inert(line))
  end
  vim.list_extend(lines, { '', '---', "_The model's words: there was nothing for Rein to check them against._" })
  return lines
end

--- Opens (or refreshes) the answer's scratch buffer in a window below,
--- leaving the cursor where it is; returns the buffer.
function M.open(t)
  local name = 'rein://answer/' .. t.id
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].filetype = 'markdown'
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.lines(t))
  vim.bo[buf].modifiable = false
  if vim.fn.bufwinid(buf) == -1 then
    vim.api.nvim_open_win(buf, false, { split = 'below', win = -1 })
  end
  return buf
end

--- One line for `:Rein status` ("answer: total() sums … (shown below)").
function M.status_line(t)
  local first = vim.split(tostring(t.summary or ''), '\n', { plain = true })[1] or ''
  first = text.inert(first)
  if vim.fn.strchars(first) > 60 then
    first = vim.fn.strcharpart(first, 0, 59) .. '…'
  end
  return 'answer: ' .. first
end

return M
