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
  H.eq(require('rein').status(), 'Rein: waiting for you · answer the question (:Rein answer)', 'status line')

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
  -- An instruction has no acceptance checks: the model's answer ends it,
  -- said to be the model's.
  H.eq(task.state, 'succeeded', 'final state')
  H.contains(task.reason, 'answered in ', 'final reason')
  H.contains(task.reason, "(the answer is the model's; there was nothing to check)", 'final reason')
  H.check(H.notified('answer sent'), 'the answer was acknowledged')
  H.check(
    require('rein').status():match('^Rein: answered in '),
    'status line after: ' .. require('rein').status()
  )
  -- The answer, in full, in a buffer below; the notification is short.
  local answer = 'Understood: prices are in cents, so total() needs no change for units.'
  H.check(H.notified('answered (shown below'), 'the answer was announced')
  H.wait('the answer buffer', function()
    local b = vim.fn.bufnr('rein://answer/' .. task.id)
    return b ~= -1 and vim.fn.bufwinid(b) ~= -1
  end)
  local buf = vim.fn.bufnr('rein://answer/' .. task.id)
  H.eq(vim.bo[buf].filetype, 'markdown', 'the answer is Markdown')
  H.check(
    vim.tbl_contains(vim.api.nvim_buf_get_lines(buf, 0, -1, false), answer),
    'the answer in the buffer'
  )
  -- :Rein status names it and shows it again.
  vim.api.nvim_win_close(vim.fn.bufwinid(buf), true)
  vim.cmd('Rein status')
  H.check(H.notified('answer: Understood: prices are in cents'), ':Rein status names the answer')
  H.check(vim.fn.bufwinid(buf) ~= -1, ':Rein status shows the answer again')
end)
