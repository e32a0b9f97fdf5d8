-- "▶ Fix with Rein" above the failing test: shown once the task's first
-- run saw test_total fail (the server asked Neovim to refresh), kept while
-- the test still fails (the edit rejected, the task cancelled), and run
-- with vim.lsp.codelens.run() it starts a fix of that test like :Rein fix.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local TITLE = '▶ Fix with Rein'

local function lenses(bufnr)
  local found = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
    if lens.command and lens.command.title == TITLE then
      table.insert(found, { line = lens.range.start.line, test = lens.command.arguments[1].testName })
    end
  end
  return found
end

H.run(function()
  local test = H.open('tests/test_cart.py')
  H.eq(lenses(test), {}, 'no lens before any run')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')

  H.wait_preview()
  H.wait('the lens above test_total', function()
    return #lenses(test) == 1
  end)
  H.eq(lenses(test), { { line = 6, test = 'TestCart.test_total' } }, 'the lens')
  H.eq(require('rein').reject(), false, 'reject() applies nothing')
  local first = H.wait_state({ 'waiting_user', 'succeeded', 'failed', 'cancelled', 'budget_exhausted' })
  vim.cmd('Rein cancel')
  H.wait_state({ 'cancelled', 'succeeded', 'failed', 'budget_exhausted' })
  H.eq(lenses(test), { { line = 6, test = 'TestCart.test_total' } }, 'still failing, still there')

  -- The lens runs a fix of its test.
  vim.api.nvim_set_current_buf(test)
  vim.api.nvim_win_set_cursor(0, { 7, 0 })
  vim.lsp.codelens.run()
  H.wait('a second task started from the lens', function()
    local task = H.task()
    return task ~= nil and task.id ~= first.id
  end)
  H.check(H.notified('Fix test TestCart.test_total'), 'started as a fix of the lens test')
end)
