-- The server dies right after Neovim applied the accepted edit
-- (REIN_CRASH_AT=apply_edit, once): cart.py holds the fix, unsaved.
-- `:Rein restart` starts a new server, which takes the task over from the
-- buffers, finds the edit applied and finishes: the fix is saved once, and
-- the status line follows the task to its end.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local FIXED = 'return sum(item.price * item.qty for item in items)'

H.run(function()
  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')
  H.wait_preview()
  local first = H.client()
  local task = H.task()
  H.keys('a')

  H.wait('the server to die', function()
    return first:is_stopped()
  end)
  local cart = H.buffer('cart.py')
  H.check(cart, 'cart.py was opened to apply the edit')
  H.check(vim.bo[cart].modified, 'the fix is in the buffer, not saved')
  H.contains(H.text(cart), FIXED, 'cart.py buffer')
  H.check(not H.disk('cart.py'):find(FIXED, 1, true), 'not on disk yet')

  vim.cmd('Rein restart')
  H.wait('a new server', function()
    local c = H.client()
    return c and c.id ~= first.id and c.initialized
  end)

  local done = H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(done.id, task.id, 'the same task')
  H.eq(done.state, 'succeeded', 'final state')
  local _, count = H.disk('cart.py'):gsub(vim.pesc(FIXED), '')
  H.eq(count, 1, 'the fix on disk, once')
  H.check(not vim.bo[cart].modified, 'cart.py saved')
  H.check(
    require('rein').status():match('^Rein: succeeded'),
    'status line: ' .. require('rein').status()
  )
end)
