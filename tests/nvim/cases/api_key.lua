-- A task run with the API key set in Neovim as a function (so it sits in no
-- config file). tests/nvim.rs gives the scripted model a scenario that
-- accepts this key only (any other is refused with a 401, the stand-in key
-- Rein sends when none is set included), so the task succeeding shows this
-- key reached the model; tests/nvim.rs then checks it appears in no log and
-- nowhere under .rein/.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  -- Before the server starts, as a user's config would say it.
  require('rein').setup({
    settings = {
      apiKey = function()
        return 'sk-rein-nvim-test-SECRET-5f3a9c\n'
      end,
    },
  })
  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')
  H.wait_preview()
  require('rein').accept()
  local task =
    H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'succeeded', 'final state')
  for _, n in ipairs(H.notes) do
    H.check(not n.msg:find('SECRET', 1, true), 'a notification shows the key: ' .. n.msg)
  end
end)
