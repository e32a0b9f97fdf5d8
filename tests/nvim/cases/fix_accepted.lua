-- Fix a test end to end, the edit accepted with the preview's `a` key: the
-- buffer and the disk hold the fix, the status line shows the step while
-- the task runs ("waiting for you · review cart.py" while the edit waits)
-- and the outcome after, :Rein status the model's last line, and :Rein
-- verification and :Rein trace show what happened.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local UNFIXED = '    return sum(item.qty for item in items)\n\n\ndef count'
local FIXED = '    return sum(item.price * item.qty for item in items)\n\n\ndef count'

H.run(function()
  local original = H.disk('cart.py')
  local expected = original:gsub(vim.pesc(UNFIXED), (FIXED:gsub('%%', '%%%%')), 1)
  H.check(expected ~= original, 'the fixture has the bug')

  H.open('tests/test_cart.py')
  -- Inside test_total.
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')

  local win, lines = H.wait_preview()
  H.eq(vim.api.nvim_get_current_win(), win, 'the preview has the focus')
  local shown = table.concat(lines, '\n')
  H.contains(shown, '--- a/cart.py', 'the preview names the file')
  H.contains(shown, '-    return sum(item.qty for item in items)', 'the preview shows the old line')
  H.contains(
    shown,
    '+    return sum(item.price * item.qty for item in items)',
    'the preview shows the new line'
  )
  H.contains(
    vim.api.nvim_win_get_config(win).title[1][1],
    'Rein: fix TestCart.test_total',
    'the title names the task'
  )
  -- cart.py was not open: nothing is loaded or changed before the user says so.
  H.check(H.buffer('cart.py') == nil, 'cart.py is not loaded before the decision')
  H.eq(H.disk('cart.py'), original, 'disk before the decision')

  -- While the edit waits, the task says it waits for the user, and for what.
  H.wait('the status line to say the task waits for the review', function()
    return require('rein').status() == 'Rein: waiting for you · review cart.py'
  end)
  local task = H.task()
  H.eq(task.state, 'waiting_user', 'state while the edit waits')
  H.eq(task.step, 'waiting for you · review cart.py', 'the step while the edit waits')
  -- The model said why, before it proposed the edit.
  H.contains(task.said or '', 'It should sum price', 'the model said')

  H.keys('a')

  task = H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'succeeded', 'final state')
  local cart = H.buffer('cart.py')
  H.check(cart, 'cart.py was opened to apply the edit')
  H.eq(H.text(cart), expected, 'cart.py buffer')
  H.eq(H.disk('cart.py'), expected, 'cart.py on disk (saved on rein/saveDocuments)')
  H.check(not vim.bo[cart].modified, 'cart.py has no unsaved changes')
  H.eq(#require('rein.approval').history, 1, 'one edit decided')
  H.eq(require('rein.approval').history[1].applied, true, 'the edit was applied')

  local after = require('rein').status()
  H.check(
    after:match('^Rein: succeeded: fixed: TestCart%.test_total passes'),
    'status line after: ' .. after
  )
  H.check(H.notified('succeeded'), 'the outcome was notified')
  -- The model's last line, plain and inert: :Rein status shows it.
  H.contains(task.said or '', 'Fixed: total() summed the quantities', 'the model said')
  vim.cmd('Rein status')
  H.contains(H.notes[#H.notes].msg, '\n  said: Fixed: total() summed', ':Rein status')

  vim.cmd('Rein verification')
  local verification = H.wait_scratch('rein://verification/')
  H.contains(verification, 'verification passed', ':Rein verification')
  H.contains(verification, 'exit 0', ':Rein verification evidence')
  H.contains(verification, 'cart.py', ':Rein verification files')

  vim.cmd('Rein trace')
  local trace = H.wait_scratch('rein://trace/' .. task.id)
  H.contains(trace, 'state     succeeded', ':Rein trace')
  H.contains(trace, 'edit_file cart.py', ':Rein trace')

  -- The HTML report, handed to vim.ui.open.
  local opened
  vim.ui.open = function(path)
    opened = path
    return {}, nil
  end
  vim.cmd('Rein trace ' .. task.id .. ' html')
  H.wait('the HTML report to be opened', function()
    return opened ~= nil
  end)
  local html = H.disk(opened)
  H.contains(html, '<html', 'the report')
  H.contains(html, task.id, 'the report names the task')
end)
