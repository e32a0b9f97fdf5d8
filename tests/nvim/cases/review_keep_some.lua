-- Reject with a reason and keep some changes, from the preview (issue 35
-- point 6). The edit changes two places in cart.py (the module docstring
-- and total()). `R` asks why (vim.ui.input): the reason reaches the model,
-- which proposes the edit again; `s` asks about each change
-- (vim.ui.select): keeping only total()'s fix applies that one, the server
-- confirms the text and the model hears what was left out. The footer
-- names the keys. A reason with control characters and 50 kB is sent as one
-- inert line, cut.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local FIXED = '    return sum(item.price * item.qty for item in items)'
local DOC = '"""A tiny shopping cart."""'

H.run(function()
  local original = H.disk('cart.py')
  -- What the user answers when asked.
  local inputs, selects = {}, {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(inputs, opts.prompt)
    on_confirm('keep the docstring\27[2J ' .. ('x'):rep(50000))
  end
  local answers = { 'Leave out', 'Keep' }
  vim.ui.select = function(items, opts, on_choice)
    table.insert(selects, opts.prompt)
    H.eq(items, { 'Keep', 'Leave out' }, 'the choices')
    on_choice(table.remove(answers, 1))
  end

  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')
  local win = H.wait_preview()
  local footer = vim.api.nvim_win_get_config(win).footer
  footer = type(footer) == 'table' and footer[1][1] or footer
  H.contains(footer, 's keep some', 'the footer')
  H.contains(footer, 'R reject with reason', 'the footer')
  H.keys('R')
  H.eq(#inputs, 1, 'R asked why')
  local approval = require('rein.approval')
  H.eq({ approval.history[1].applied, approval.history[1].how }, { false, 'rejected' }, 'first')
  local reason = approval.history[1].reason
  H.contains(reason, 'the user said: keep the docstring\\x1b[2J xxx', 'the reason, inert')
  H.check(#reason < 2100, 'the reason is cut: ' .. #reason)
  H.eq(H.disk('cart.py'), original, 'nothing applied by the rejection')

  -- The model read the reason (the scenario proposes again only then).
  H.wait_preview(2)
  H.keys('s')
  H.eq(#selects, 2, 's asked about each change')
  H.contains(selects[1], 'change 1 of 2 (line 1)', 'the first question')
  H.contains(selects[2], 'change 2 of 2', 'the second question')
  H.contains(selects[2], FIXED:gsub('^%s+', ''), 'the second question shows the change')

  local task =
    H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'succeeded', 'final state (the model heard what was left out)')
  H.eq({ approval.history[2].applied, approval.history[2].how }, { true, 'kept some' }, 'second')
  local expected = original:gsub(vim.pesc('    return sum(item.qty for item in items)\n\n\ndef count'),
    (FIXED .. '\n\n\ndef count'):gsub('%%', '%%%%'), 1)
  H.eq(H.text(H.buffer('cart.py')), expected, 'cart.py buffer: only total() changed')
  H.eq(H.disk('cart.py'), expected, 'cart.py on disk: only total() changed')
  H.contains(H.disk('cart.py'), DOC, 'the docstring as it was')
end)
