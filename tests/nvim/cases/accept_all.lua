-- "Accept all" (A in the preview): the task's second edit is applied
-- without a preview; both land, in the buffer and on disk.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local UNFIXED = '    return sum(item.qty for item in items)\n\n\ndef count'
local FIXED = '    return sum(item.price * item.qty for item in items)\n\n\ndef count'
local DOC_FROM = '"""A tiny shopping cart."""'
local DOC_TO = '"""A tiny shopping cart: total() is the sum of price × quantity."""'

H.run(function()
  local original = H.disk('cart.py')
  local previews = 0
  vim.api.nvim_create_autocmd('User', {
    pattern = 'ReinApproval',
    callback = function()
      local approval = require('rein.approval')
      local current = approval.current()
      if current and current.win and not current.counted then
        current.counted = true
        previews = previews + 1
      end
    end,
  })
  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')
  H.wait_preview()
  H.keys('A')

  local task =
    H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'succeeded', 'final state')
  local history = require('rein.approval').history
  H.eq(#history, 2, 'two edits')
  H.eq({ history[1].applied, history[1].how }, { true, 'accepted all' }, 'the first edit')
  H.eq({ history[2].applied, history[2].how }, { true, 'accepted all' }, 'the second edit')
  H.eq(previews, 1, 'previews shown')
  local expected = original:gsub(vim.pesc(UNFIXED), (FIXED:gsub('%%', '%%%%')), 1)
  expected = expected:gsub(vim.pesc(DOC_FROM), DOC_TO, 1)
  H.eq(H.text(H.buffer('cart.py')), expected, 'cart.py buffer')
  H.eq(H.disk('cart.py'), expected, 'cart.py on disk')
end)
