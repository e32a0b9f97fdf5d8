-- :Rein show while the task waits for its review: the task opens in a
-- buffer below and keeps up with it by itself — after the accept it shows
-- the verification with what the test printed.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local function shown(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

H.run(function()
  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')
  H.wait_preview()

  vim.cmd('Rein show')
  local buf = vim.api.nvim_get_current_buf()
  H.contains(vim.api.nvim_buf_get_name(buf), 'rein://task/', 'the buffer is the task')
  H.wait('the task in the buffer', function()
    return shown(buf):find('turn 1', 1, true) ~= nil
  end)
  H.check(not shown(buf):find('What it printed', 1, true) and not shown(buf):find('verified', 1, true), 'nothing verified yet: ' .. shown(buf))
  H.eq(vim.bo[buf].modifiable, false, 'read-only')
  -- Follow the end.
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })

  H.eq(require('rein').accept(), true, 'accept() applies the edit')
  local task = H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'succeeded', 'final state')
  H.wait('the verification, with the test output, in the buffer', function()
    local text = shown(buf)
    return text:find('│ OK', 1, true) ~= nil and text:find('verified', 1, true) ~= nil
  end)
  H.eq(
    vim.api.nvim_win_get_cursor(vim.fn.win_findbuf(buf)[1])[1],
    vim.api.nvim_buf_line_count(buf),
    'the window followed the end'
  )
end)
