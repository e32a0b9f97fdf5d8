-- :'<,'>Rein ask on a range: the instruction and the lines reach the
-- server (rein.runTask {instruction, uri, range}); the command the model
-- wants to run is put to the user through vim.ui.select (Neovim's
-- window/showMessageRequest handler) and allowed once; the model's
-- question is shown and the task waits; :Rein answer sends the answer and
-- the task ends.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  -- The user's choice in the command approval, and what was asked.
  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, { prompt = opts.prompt, items = vim.deepcopy(items) })
    for _, item in ipairs(items) do
      if item.title == 'Allow once' then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end

  H.open('cart.py')
  vim.cmd('12,13Rein ask Check the units of the prices in total()')

  local task =
    H.wait_state({ 'waiting_user', 'succeeded', 'failed', 'cancelled', 'budget_exhausted' })
  H.eq(task.state, 'waiting_user', 'state after the question')
  H.eq(
    task.reason,
    'Are prices in cents or in euros?',
    'the question (so the command ran and said rein-approved)'
  )
  H.check(H.notified('Are prices in cents or in euros?'), 'the question was shown')
  H.eq(require('rein').status(), 'Rein: waiting for your answer (:Rein answer)', 'status line')

  H.eq(#asked, 1, 'one command approval')
  H.contains(asked[1].prompt, '“echo rein-approved”', 'the approval names the command')
  local titles = vim.tbl_map(function(i)
    return i.title
  end, asked[1].items)
  H.eq(titles, { 'Allow once', 'Allow for this task', 'Deny' }, 'the approval actions')

  vim.cmd('Rein answer in cents')
  H.wait('the task to end', function()
    return require('rein.progress').is_terminal(H.task().state)
  end)
  task = H.task()
  H.check(
    not (task.reason or ''):find('OFF SCRIPT', 1, true),
    'the model got the answer: ' .. tostring(task.reason)
  )
  -- An instruction has no acceptance checks: the model's summary ends it.
  H.eq(task.state, 'succeeded', 'final state')
  H.contains(task.reason, 'done', 'final reason')
  H.check(H.notified('answer sent'), 'the answer was acknowledged')
  H.check(
    require('rein').status():match('^Rein: ' .. task.state),
    'status line after: ' .. require('rein').status()
  )
end)
