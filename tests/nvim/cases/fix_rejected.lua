-- The edit rejected through the plugin's Lua API: the buffer (open, so the
-- edit is tied to its version) and the disk are unchanged, the model is
-- told (the scenario then asks what to do instead, so the task waits for
-- the user), the question is shown, :Rein resume reaches the server (which
-- refuses: the task is still running), and :Rein cancel ends the task; it
-- never succeeds.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  local original = H.disk('cart.py')
  local cart = H.open('cart.py')
  local tick = vim.api.nvim_buf_get_changedtick(cart)
  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')

  local _, lines = H.wait_preview()
  H.contains(
    table.concat(lines, '\n'),
    '+    return sum(item.price * item.qty for item in items)',
    'preview'
  )
  H.eq(require('rein').reject(), false, 'reject() applies nothing')

  -- reject.json asks this only if the edit's result said the user rejected it.
  local task =
    H.wait_state({ 'waiting_user', 'succeeded', 'failed', 'cancelled', 'budget_exhausted' })
  H.eq(task.state, 'waiting_user', 'state after the rejection')
  H.contains(task.reason, 'You rejected my edit to cart.py', 'the model was told')
  H.check(H.notified('You rejected my edit to cart.py'), 'the question was shown')
  H.eq(require('rein').status(), 'Rein: waiting for you · answer the question (:Rein answer)', 'status line')

  H.eq(H.text(cart), original, 'cart.py buffer after the rejection')
  H.eq(vim.api.nvim_buf_get_changedtick(cart), tick, 'cart.py was never touched')
  H.eq(H.disk('cart.py'), original, 'cart.py on disk')
  local history = require('rein.approval').history
  H.eq(#history, 1, 'one edit decided')
  H.eq({ history[1].applied, history[1].how }, { false, 'rejected' }, 'the decision')

  -- :Rein resume picks the waiting task and sends rein.resumeTask; this
  -- server still runs it, so it refuses, and the refusal is shown.
  vim.cmd('Rein resume')
  H.wait('the refusal to resume', function()
    return H.notified('rein.resumeTask failed: task ' .. task.id .. ' is already running')
  end)

  vim.cmd('Rein cancel')
  task = H.wait_state({ 'cancelled', 'succeeded', 'failed', 'budget_exhausted' })
  H.eq(task.state, 'cancelled', 'state after :Rein cancel')
  H.check(
    vim.startswith(require('rein').status(), 'Rein: cancelled'),
    'status line after: ' .. require('rein').status()
  )
  H.eq(H.text(cart), original, 'cart.py buffer at the end')
  H.eq(H.disk('cart.py'), original, 'cart.py on disk at the end')
end)
