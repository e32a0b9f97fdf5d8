-- The user types in cart.py (real keys, in its window) while the preview of
-- Rein's edit to it is open, then accepts the edit: the plugin refuses it
-- as stale (applied = false, never clobbering the typing), the model reads
-- again and proposes the change on the user's text, which is accepted; the
-- task succeeds with both the user's line and the fix.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local USER_LINE = '# Prices are in cents (typed by the user).'
local UNFIXED = '    return sum(item.qty for item in items)\n\n\ndef count'
local FIXED = '    return sum(item.price * item.qty for item in items)\n\n\ndef count'

H.run(function()
  local original = H.disk('cart.py')
  local cart = H.open('cart.py')
  local cart_win = vim.api.nvim_get_current_win()
  H.open('tests/test_cart.py', 'split')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')

  local preview = H.wait_preview(1)
  -- The user goes back to cart.py and types a line under the docstring.
  vim.api.nvim_set_current_win(cart_win)
  H.keys('ggo' .. USER_LINE .. '<Esc>')
  H.eq(vim.api.nvim_buf_get_lines(cart, 1, 2, false)[1], USER_LINE, 'the typed line')
  H.wait('the preview to be marked stale', function()
    return vim.api.nvim_win_get_config(preview).title[1][1]:find('STALE', 1, true)
  end)
  -- Back to the preview, and accept.
  vim.cmd('Rein review')
  H.eq(vim.api.nvim_get_current_win(), preview, ':Rein review focuses the preview')
  H.keys('a')

  local history = require('rein.approval').history
  H.eq(#history, 1, 'the first edit was decided')
  H.eq(history[1].applied, false, 'the stale edit was not applied')
  H.contains(history[1].reason, 'changed in Neovim while the edit waited', 'why')
  H.eq(vim.api.nvim_buf_get_lines(cart, 1, 2, false)[1], USER_LINE, 'the typing survived')

  local _, lines = H.wait_preview(2)
  local shown = table.concat(lines, '\n')
  H.contains(
    shown,
    '+    return sum(item.price * item.qty for item in items)',
    'the second preview'
  )
  H.check(not shown:find('-' .. USER_LINE, 1, true), 'the second edit keeps the typed line')
  H.keys('a')

  local task =
    H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'succeeded', 'final state')
  H.eq(#history, 2, 'two edits decided')
  H.eq(history[2].applied, true, 'the second edit was applied')
  local expected = original:gsub(vim.pesc(UNFIXED), (FIXED:gsub('%%', '%%%%')), 1)
  expected = expected:gsub('\n', '\n' .. USER_LINE .. '\n', 1)
  H.eq(H.text(cart), expected, 'cart.py buffer: the typing and the fix')
  H.eq(H.disk('cart.py'), expected, 'cart.py on disk')
end)
