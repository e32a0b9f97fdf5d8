-- Undo a task: the fix accepted, then a line typed in cart.py, then
-- `:Rein undo`: the buffer loses the fix and keeps the typed line, without
-- a preview (the user asked), and the message says what was undone.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local UNFIXED = '    return sum(item.qty for item in items)\n\n\ndef count'
local FIXED = '    return sum(item.price * item.qty for item in items)\n\n\ndef count'
local TYPED = '# typed by the user after the task'

H.run(function()
  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')
  H.wait_preview()
  H.keys('a')
  local task = H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'succeeded', 'final state')
  local cart = H.buffer('cart.py')
  H.contains(H.text(cart), FIXED, 'the fix is in the buffer')

  -- The user types a line at the top of cart.py.
  vim.api.nvim_buf_set_lines(cart, 0, 0, false, { TYPED })
  H.eq(require('rein.undo').candidates()[1].id, task.id, 'the task is the one to undo')

  vim.cmd('Rein undo')
  H.wait('the fix to be taken back', function()
    return H.text(cart):find(UNFIXED, 1, true) ~= nil
  end)
  local text = H.text(cart)
  H.check(text:find(TYPED, 1, true) == 1, 'the typed line is kept: ' .. text)
  H.check(text:find(FIXED, 1, true) == nil, 'the fix is gone')
  H.wait('the outcome to be said', function()
    return H.notified("Undid Rein's changes to 1 file.")
  end)
  H.pass()
end)
