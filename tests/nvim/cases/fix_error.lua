-- `:Rein fix` on a line with an error from vim.diagnostic: "Fix this error
-- with Rein", checked by the checker that reports it (real mypy); the edit
-- accepted in the preview; the task succeeds because mypy no longer
-- reports the error. On a line with an error no checker can confirm,
-- `:Rein fix` says why instead of starting a task.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local MYPY = 'Argument 1 to "greet" has incompatible type "int"; expected "str"'

H.run(function()
  H.open('app.py')
  local bufnr = vim.api.nvim_get_current_buf()
  local ns = vim.api.nvim_create_namespace('test-linter')

  -- An error the project's checker cannot confirm: said, nothing started.
  vim.diagnostic.set(ns, bufnr, {
    { lnum = 1, col = 4, severity = vim.diagnostic.severity.ERROR, source = 'acme-lint', message = 'bad style' },
  })
  vim.api.nvim_win_set_cursor(0, { 2, 4 })
  vim.cmd('Rein fix')
  H.wait('the reason Rein cannot check it', function()
    return H.notified('cannot check the error on this line')
  end)
  H.check(H.notified('acme-lint'), 'the reason names the source')

  -- mypy's error on line 7.
  vim.diagnostic.set(ns, bufnr, {
    {
      lnum = 6,
      col = 16,
      end_col = 17,
      severity = vim.diagnostic.severity.ERROR,
      source = 'mypy',
      code = 'arg-type',
      message = MYPY,
    },
  })
  vim.api.nvim_win_set_cursor(0, { 7, 16 })
  vim.cmd('Rein fix')

  local _, lines = H.wait_preview()
  local shown = table.concat(lines, '\n')
  H.contains(shown, '+    print(greet(str(3)))', 'the preview shows the fix')
  H.keys('a')

  local task = H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user', 'unverified' })
  H.eq(task.state, 'succeeded', 'final state')
  H.contains(H.disk('app.py'), 'print(greet(str(3)))', 'app.py on disk')
  local after = require('rein').status()
  H.check(after:match('no longer reports %[arg%-type%] at app%.py:7'), 'status line after: ' .. after)
end)
