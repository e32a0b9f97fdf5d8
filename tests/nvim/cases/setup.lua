-- A first run with no provider: :Rein fix says Rein needs a model and to
-- run :Rein setup, and starts nothing; :Rein setup offers the providers
-- (the offline demo model among them), applies the choice at once and
-- shows the lines that keep it; :Rein fix then fixes the test.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  local g = vim.g.rein
  g.settings.provider = nil
  vim.g.rein = g
  require('rein').setup({})

  H.open('tests/test_cart.py')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')
  H.wait('Rein to say it needs a model', function()
    return H.notified('Rein needs a model before it can work')
  end)
  H.check(H.notified('Run :Rein setup'), 'the way to set up is named')
  H.check(H.task() == nil, 'no task started')

  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = vim.tbl_map(function(i)
      return opts.format_item and opts.format_item(i) or i
    end, items)
    for _, item in ipairs(items) do
      if (opts.format_item and opts.format_item(item) or item):find('offline demo', 1, true) then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end
  vim.cmd('Rein setup')
  H.wait('the set-up to end', function()
    return H.notified('set up with the offline demo model')
  end)
  H.contains(table.concat(offered, '\n'), 'Anthropic (Claude)', 'the choices')
  H.contains(table.concat(offered, '\n'), 'Another OpenAI-compatible server', 'the choices')
  local keep
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == 'rein://setup' then
      keep = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
    end
  end
  H.check(keep, 'the lines that keep the set-up are shown')
  H.contains(keep, 'provider = "scripted"', 'the lines that keep it')

  vim.cmd('wincmd p')
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')
  H.wait_preview()
  H.keys('a')
  local task = H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'succeeded', 'final state')
end)
