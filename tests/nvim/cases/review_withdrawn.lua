-- Rein withdraws an edit the user left open past the server's approval
-- timeout (2 s here): its `$/cancelRequest` alone closes the preview while
-- the task goes on, the user is told, the status line stops saying the
-- task waits for the review, and the preview's `a`, pressed late, applies
-- nothing. (The task is then cancelled, to end the case.)
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  -- The server gives up on an edit after 2 s…
  local g = vim.g.rein
  g.settings.approvalTimeoutSecs = 2
  vim.g.rein = g
  local original = H.disk('cart.py')
  local cart = H.open('cart.py')
  local tick = vim.api.nvim_buf_get_changedtick(cart)
  -- …and the plugin's own guard, which drops an edit a second before the
  -- server would, is set far later: what closes the preview here can only
  -- be the server's withdrawal.
  require('rein.config').set({ settings = { approvalTimeoutSecs = 600 } })

  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')

  local win = H.wait_preview()
  local accept_key
  for _, map in ipairs(vim.api.nvim_buf_get_keymap(vim.api.nvim_win_get_buf(win), 'n')) do
    if map.lhs == 'a' then
      accept_key = map.callback
    end
  end
  H.check(type(accept_key) == 'function', 'the preview maps a')
  H.wait('the status line to say the task waits for the review', function()
    return require('rein').status() == 'Rein: waiting for you · review cart.py'
  end)

  H.wait('the preview to close', function()
    return not vim.api.nvim_win_is_valid(win)
  end)
  local history = require('rein.approval').history
  H.eq(#history, 1, 'one edit ended')
  H.eq({ history[1].applied, history[1].how }, { false, 'withdrawn' }, 'the withdrawal')
  H.check(
    H.notified('Rein withdrew its edit to cart.py (no answer in time, or the task moved on)'),
    'the user was told'
  )
  H.check(
    not require('rein.progress').is_terminal(H.task().state),
    'the task goes on: ' .. H.task().state
  )
  H.wait('the status line to stop saying the task waits for the review', function()
    return not require('rein').status():find('review', 1, true)
  end)

  accept_key()
  H.check(H.notified('that edit was withdrawn; nothing was applied'), 'the late key is answered')
  H.eq(H.text(cart), original, 'cart.py buffer')
  H.eq(vim.api.nvim_buf_get_changedtick(cart), tick, 'cart.py was never touched')

  vim.cmd('Rein cancel')
  H.wait('the task to end', function()
    return require('rein.progress').is_terminal(H.task().state)
  end)
  H.eq(H.text(cart), original, 'cart.py buffer at the end')
  H.eq(H.disk('cart.py'), original, 'cart.py on disk at the end')
end)
