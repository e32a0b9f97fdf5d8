-- :Rein cancel while the model is mid-reply (slow.json streams for
-- minutes): the task ends `cancelled` at once, nothing was proposed, the
-- status line says so.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  local original = H.disk('cart.py')
  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')

  -- Mid-turn: the progress has begun and the task runs.
  H.wait('the task to run', function()
    local t = H.task()
    return t and t.state == 'running' and t.title ~= nil
  end)
  H.check(
    -- What it does now, and how far it is.
    require('rein').status():match('^Rein: %a.* · turn %d+/20$'),
    'status while running: ' .. require('rein').status()
  )

  vim.cmd('Rein cancel')
  local task =
    H.wait_state({ 'cancelled', 'succeeded', 'failed', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'cancelled', 'state after :Rein cancel')
  H.check(
    vim.startswith(require('rein').status(), 'Rein: cancelled'),
    'status line after: ' .. require('rein').status()
  )
  H.check(H.notified('cancelled'), 'the outcome was notified')
  H.eq(#require('rein.approval').history, 0, 'no edit was proposed')
  H.eq(H.disk('cart.py'), original, 'cart.py on disk')
end)
