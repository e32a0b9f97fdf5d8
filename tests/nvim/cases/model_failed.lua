-- A key the provider turns down: the task fails, and its message leads to
-- :Rein setup (the server says why it stopped: `cause`, typed).
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')
  local task = H.wait_state({ 'failed', 'succeeded', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'failed', 'final state')
  H.eq(task.cause, 'model_failed', 'the cause')
  H.wait('the way to fix it', function()
    return H.notified(':Rein setup to set up the model')
  end)
end)
