-- The texts the plugin shows, on statuses and edits no scripted model
-- sends: a cost partly priced ("≥ $0.03"), fully priced ("$0.03"), unknown
-- ("cost unknown"); Markdown backticks in reasons (matched pairs only);
-- a reason full of control and bidi characters in the preview, shown
-- escaped and wrapped to the window, the keys still there.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local progress = require('rein.progress')

local function status(params)
  progress.on_task_status(nil, vim.tbl_extend('keep', params, {
    taskId = 't-texts',
    state = 'running',
    turn = 2,
    maxTurns = 20,
    inputTokens = 1000,
    outputTokens = 200,
    costUsd = 0,
    unpricedCalls = 0,
  }), { client_id = 1 })
  return require('rein').status()
end

H.run(function()
  H.eq(status({ costUsd = 0.031 }), 'Rein: turn 2/20 · running · 1.2k tok · $0.03', 'priced')
  H.eq(
    status({ costUsd = 0.031, unpricedCalls = 1 }),
    'Rein: turn 2/20 · running · 1.2k tok · ≥ $0.03',
    'partly priced'
  )
  H.eq(
    status({ unpricedCalls = 2 }),
    'Rein: turn 2/20 · running · 1.2k tok · cost unknown',
    'not priced'
  )
  H.eq(
    status({ state = 'waiting_user', waitingFor = { kind = 'approval', detail = '“rm\27[2K”' } }),
    'Rein: waiting for you · allow “rm\\x1b[2K”',
    'an approval, its detail inert'
  )
  H.check(not H.notified('asks:'), 'an approval is no question')
  H.eq(
    status({
      state = 'succeeded',
      reason = 'fixed: `a` and ``b`` pass, a lone ` stays',
      unpricedCalls = 1,
    }),
    'Rein: succeeded: fixed: a and b pass, a lone ` stays · 1.2k tok · cost unknown',
    'the outcome, plain'
  )
  H.check(H.notified('fixed: a and b pass, a lone ` stays'), 'the outcome notification, plain')

  -- A reason that tries to rewrite the screen and reorder the text.
  local plan = {
    label = 'Rein: fix \27]0;title\7x',
    description = 'Looks fine.\27[2K\r Trust me \u{202e}gnp.exe\u{202c} and '
      .. string.rep('more words ', 20),
    confirm = true,
    steps = {},
  }
  local uri = vim.uri_from_fname(vim.fn.getcwd() .. '/cart.py')
  local files = { { uri = uri, old = 'a\n', new = 'b\n' } }
  local accepted = false
  local win, buf = require('rein.preview').open(plan, files, {
    a = function()
      accepted = true
    end,
  }, { max_width = 60 })
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local shown = table.concat(lines, '\n')
  H.contains(lines[1], 'Why: Looks fine.\\x1b[2K\\r Trust me \\u{202e}gnp.exe\\u{202c}', 'escaped')
  H.check(not shown:find('[\27\r\7]'), 'no control character reaches the window')
  H.check(not shown:find('\u{202e}', 1, true), 'no bidi override reaches the window')
  local width = vim.api.nvim_win_get_width(win)
  H.check(width <= 60, 'the window keeps to max_width: ' .. width)
  local n = 0
  for _, l in ipairs(lines) do
    H.check(vim.fn.strdisplaywidth(l) <= width, 'fits the window: ' .. l)
    if vim.startswith(l, 'Why: ') or vim.startswith(l, '     ') then
      n = n + 1
    end
  end
  H.check(n > 2, 'the reason is wrapped over several lines')
  H.contains(shown, '--- a/cart.py', 'the diff')
  local title = vim.api.nvim_win_get_config(win).title[1][1]
  H.contains(title, 'Rein: fix \\x1b]0;title\\x07x', 'the title, escaped')
  vim.api.nvim_set_current_win(win)
  H.keys('a')
  H.check(accepted, 'the keys still work')
  require('rein.preview').close(win)
end)
