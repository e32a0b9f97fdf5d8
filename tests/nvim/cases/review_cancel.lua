-- :Rein cancel while the preview of an edit is open: Rein withdraws the
-- edit (`$/cancelRequest`) and the task ends cancelled; whichever Neovim
-- hears first closes the preview, and the user is told. The preview's own
-- `a`, pressed late, applies nothing, and neither does require('rein')
-- .accept(): cart.py is unchanged, in its buffer and on disk.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  local original = H.disk('cart.py')
  local cart = H.open('cart.py')
  local tick = vim.api.nvim_buf_get_changedtick(cart)
  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')

  local win = H.wait_preview()
  local buf = vim.api.nvim_win_get_buf(win)
  -- The preview's `a`, as the user's late key press would run it.
  local accept_key
  for _, map in ipairs(vim.api.nvim_buf_get_keymap(buf, 'n')) do
    if map.lhs == 'a' then
      accept_key = map.callback
    end
  end
  H.check(type(accept_key) == 'function', 'the preview maps a')
  H.check(
    require('rein.rpc').watching(H.client().id),
    "the plugin knows the ids of the server's requests"
  )

  -- From the preview, where the user is.
  H.eq(vim.api.nvim_get_current_win(), win, 'the preview has the focus')
  vim.cmd('Rein cancel')

  H.wait('the preview to close', function()
    return not vim.api.nvim_win_is_valid(win) and require('rein.approval').pending() == 0
  end)
  H.wait('the user to be told', function()
    return H.notified('Rein withdrew its edit to cart.py (the task was cancelled)')
  end)
  local task = H.wait_state({ 'cancelled', 'succeeded', 'failed', 'budget_exhausted' })
  H.eq(task.state, 'cancelled', 'state after :Rein cancel')

  local history = require('rein.approval').history
  H.eq(#history, 1, 'one edit decided')
  H.eq(history[1].applied, false, 'the edit was not applied')
  -- 'withdrawn': the server's $/cancelRequest came first; 'dropped': the
  -- task's end did. Either closes it; nothing else may.
  H.check(
    history[1].how == 'withdrawn' or history[1].how == 'dropped',
    'how the edit ended: ' .. tostring(history[1].how)
  )
  io.stdout:write('the preview was closed by: ' .. history[1].how .. '\n')

  -- Late: the preview's key and the Lua API change nothing.
  accept_key()
  H.check(H.notified('that edit was withdrawn; nothing was applied'), 'the late key is answered')
  H.eq(require('rein').accept(), false, 'accept() after the withdrawal')
  H.eq(#history, 1, 'no decision after the withdrawal')
  H.eq(H.text(cart), original, 'cart.py buffer')
  H.eq(vim.api.nvim_buf_get_changedtick(cart), tick, 'cart.py was never touched')
  H.eq(H.disk('cart.py'), original, 'cart.py on disk')
  H.check(
    vim.startswith(require('rein').status(), 'Rein: cancelled'),
    'status line after: ' .. require('rein').status()
  )
end)
