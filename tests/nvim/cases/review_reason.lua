-- The review of an edit, as the user sees it: the preview shows the
-- model's reason ("Why: …", wrapped to the window) above the diff; while
-- it is open the task shows as waiting for the user's review (status line,
-- :Rein status), which is no question (nothing notified as one, :Rein
-- answer does not pick it); hidden, the status line points at :Rein
-- review. After the edit is accepted, the outcome is plain text (no
-- Markdown backticks) and the scripted model's cost is "cost unknown"
-- (it has no price), never "$0.00".
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

-- What the demo scenario's model writes before its edit.
local REASON =
  'total() sums the quantities and ignores the prices. It should sum price × quantity.'

--- The :Rein status report (a vim.notify), fresh.
local function rein_status()
  local before = #H.notes
  vim.cmd('Rein status')
  H.check(#H.notes == before + 1, ':Rein status notified once')
  return H.notes[#H.notes].msg
end

H.run(function()
  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')

  local win, lines = H.wait_preview()
  local width = vim.api.nvim_win_get_width(win)

  -- "Why: " and its indented continuation lines, then a blank line, then
  -- the diff.
  H.check(vim.startswith(lines[1], 'Why: '), 'the preview starts with the reason: ' .. lines[1])
  local why = { lines[1]:sub(#'Why: ' + 1) }
  local i = 2
  while lines[i] ~= '' do
    H.check(vim.startswith(lines[i], '     '), 'a continuation line: ' .. tostring(lines[i]))
    table.insert(why, vim.trim(lines[i]))
    i = i + 1
  end
  H.eq(table.concat(why, ' '), REASON, 'the reason, unwrapped')
  H.check(i > 2, 'the reason is wrapped (the window is ' .. width .. ' wide)')
  for n = 1, i - 1 do
    H.check(
      vim.fn.strdisplaywidth(lines[n]) <= width,
      ('line %d fits the window (%d): %s'):format(n, width, lines[n])
    )
  end
  H.eq(lines[i + 1], '--- a/cart.py', 'the diff follows the reason')
  H.contains(
    table.concat(lines, '\n'),
    '+    return sum(item.price * item.qty for item in items)',
    'the diff'
  )

  -- Waiting for the user's review, while the preview is open.
  H.wait('the status line to say the task waits for the review', function()
    return require('rein').status() == 'Rein: waiting for you · review cart.py'
  end)
  local task = H.task()
  H.eq(task.state, 'waiting_user', 'the state while the edit waits')
  H.eq(task.waiting_for, { kind = 'review', detail = 'cart.py' }, 'what it waits for')
  H.contains(rein_status(), 'waiting for you · review cart.py', ':Rein status')
  H.check(not H.notified('asks:'), 'a review is not notified as a question')
  vim.cmd('Rein answer')
  H.check(H.notified('no task to answer'), ':Rein answer does not pick a review')

  -- Hidden, the status line says how to get it back.
  vim.api.nvim_set_current_win(win)
  H.keys('q')
  H.check(not require('rein.approval').visible(), 'q hides the preview')
  H.eq(
    require('rein').status(),
    'Rein: waiting for you · review cart.py (:Rein review)',
    'the status line with the preview hidden'
  )
  vim.cmd('Rein review')
  H.check(require('rein.approval').visible(), ':Rein review shows it again')
  H.keys('a')

  task = H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'succeeded', 'final state')
  H.check(task.unpriced > 0, 'the scripted model has no price: ' .. tostring(task.unpriced))
  local after = require('rein').status()
  local plain_outcome = '^Rein: succeeded: fixed: TestCart%.test_total passes.* · [%d.]+k? tok · '
  H.check(
    after:match(plain_outcome .. 'cost unknown$'),
    'status line after (plain, cost unknown): ' .. after
  )
  local report = rein_status()
  H.contains(report, 'fixed: TestCart.test_total passes', ':Rein status after')
  H.contains(report, 'cost unknown', ':Rein status after')
  local outcome
  for _, n in ipairs(H.notes) do
    if n.msg:find('succeeded', 1, true) then
      outcome = n.msg
    end
  end
  H.contains(outcome, 'fixed: TestCart.test_total passes', 'the outcome notification')
  H.contains(outcome, 'cost unknown', 'the outcome notification')
  H.check(not outcome:find('`', 1, true), 'backticks in the outcome: ' .. outcome)
  for _, n in ipairs(H.notes) do
    H.check(not n.msg:find('$0.00', 1, true), 'a notification with $0.00: ' .. n.msg)
  end
end)
