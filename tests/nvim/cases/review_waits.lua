-- What the task waits for, in words: while the command approval
-- (vim.ui.select) is open the status line says "waiting for you · allow
-- “echo rein-approved”", which is no question (nothing notified as one,
-- :Rein answer does not pick it); the model's question after it is
-- notified once (its plain waiting_user and its `waitingFor: answer` are
-- one question), shown by :Rein status, and answered with :Rein answer.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local ALLOW = 'Rein: waiting for you · allow “echo rein-approved”'
local QUESTION = 'Are prices in cents or in euros?'

local function count(part)
  local n = 0
  for _, note in ipairs(H.notes) do
    if note.msg:find(part, 1, true) then
      n = n + 1
    end
  end
  return n
end

H.run(function()
  -- The approval stays open until the case answers it.
  local pending
  vim.ui.select = function(items, _, on_choice)
    pending = { items = items, on_choice = on_choice }
  end

  H.open('cart.py')
  vim.cmd('12,13Rein ask Check the units of the prices in total()')

  H.wait('the command approval', function()
    return pending ~= nil
  end)
  H.wait('the status line to say what the task waits for', function()
    return require('rein').status() == ALLOW
  end)
  H.eq(H.task().waiting_for.kind, 'approval', 'what it waits for')
  vim.cmd('Rein status')
  H.contains(
    H.notes[#H.notes].msg,
    'waiting for you · allow “echo rein-approved”',
    ':Rein status'
  )
  H.check(not H.notified('asks:'), 'an approval is not notified as a question')
  vim.cmd('Rein answer')
  H.check(H.notified('no task to answer'), ':Rein answer does not pick an approval')

  for _, item in ipairs(pending.items) do
    if item.title == 'Allow once' then
      pending.on_choice(item)
    end
  end

  H.wait('the question', function()
    local t = H.task()
    return t.question == QUESTION and t.waiting_for and t.waiting_for.kind == 'answer'
  end)
  H.eq(require('rein').status(), 'Rein: waiting for you · answer the question (:Rein answer)', 'status line')
  H.eq(count(QUESTION), 1, 'the question is notified once')
  vim.cmd('Rein status')
  H.contains(
    H.notes[#H.notes].msg,
    'waiting for you · answer the question (:Rein answer): ' .. QUESTION,
    ':Rein status'
  )

  vim.cmd('Rein answer in cents')
  H.wait('the task to end', function()
    return require('rein.progress').is_terminal(H.task().state)
  end)
  H.eq(H.task().state, 'succeeded', 'final state')
  H.check(
    require('rein').status():match(' · cost unknown$'),
    'status line after: ' .. require('rein').status()
  )
end)
