-- What the status line and :Rein status make of `step` and `said`, on
-- statuses no scripted model sends: the step with the turn while the task
-- runs, the server's words for a wait, the model's latest line kept (and
-- shown by :Rein status) inert and bounded, whatever it holds.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local progress = require('rein.progress')

local function status(params)
  progress.on_task_status(nil, vim.tbl_extend('keep', params, {
    taskId = 't-progress',
    state = 'running',
    turn = 2,
    maxTurns = 20,
    inputTokens = 1000,
    outputTokens = 200,
    costUsd = 0.031,
    unpricedCalls = 0,
  }), { client_id = 1 })
  return require('rein').status()
end

H.run(function()
  H.eq(
    status({ step = 'running tests', said = 'Let me run the failing test first.' }),
    'Rein: running tests · turn 2/20',
    'the step, not the counters'
  )
  H.eq(progress.tasks['t-progress'].said, 'Let me run the failing test first.', 'said')
  status({ step = 'running tests', said = 'Now `total()` passes' })
  H.eq(progress.tasks['t-progress'].said, 'Now total() passes', 'said, plain')
  status({ step = 'running tests', said = 'Let me run the failing test first.' })
  H.eq(status({ step = 'thinking' }), 'Rein: thinking · turn 2/20', 'never stale')
  H.eq(
    progress.tasks['t-progress'].said,
    'Let me run the failing test first.',
    'the model’s line is kept until a new one comes'
  )
  H.eq(
    status({
      state = 'waiting_user',
      waitingFor = { kind = 'review', detail = 'cart.py' },
      step = 'waiting for you · review cart.py',
    }),
    'Rein: waiting for you · review cart.py (:Rein review)',
    'a review waits, not "editing cart.py"'
  )
  -- Whatever the model's words hold, they stay one inert line.
  local said = 'ok\27[2K\r\nfaked \u{202e}gnp.exe ' .. string.rep('word ', 400)
  H.eq(
    status({ step = 'editing \27]0;x\7cart.py', said = said }),
    'Rein: editing \\x1b]0;x\\x07cart.py · turn 2/20',
    'the step, inert'
  )
  local kept = progress.tasks['t-progress'].said
  H.check(not kept:find('[%c]'), 'no control character: ' .. kept)
  H.check(not kept:find('\u{202e}', 1, true), 'no bidi override')
  H.contains(kept, 'ok\\x1b[2K  faked \\u{202e}gnp.exe word', 'escaped')
  H.check(#kept <= 1024 + #'…', 'bounded: ' .. #kept)
  vim.cmd('Rein status')
  local report = H.notes[#H.notes].msg
  H.contains(report, 't-progress  running          editing \\x1b]0;x\\x07cart.py · 1.2k tok · $0.03', ':Rein status')
  H.contains(report, '\n  said: ok\\x1b[2K  faked', ':Rein status shows what the model said')
  -- The end: the outcome, no step; the model's line still there.
  H.eq(
    status({ state = 'succeeded', reason = 'fixed: `t` passes', said = 'Fixed.' }),
    'Rein: succeeded: fixed: t passes · 1.2k tok · $0.03',
    'the outcome'
  )
  H.eq(progress.tasks['t-progress'].step, nil, 'no step once it ended')
  H.eq(progress.tasks['t-progress'].said, 'Fixed.', 'the last line')
  -- Before the model's first reply nothing is known of the cost.
  H.eq(progress.spent_text({ tokens = 0, cost = 0, unpriced = 0 }), '0 tok', 'no guessed $0.00')
  H.eq(progress.spent_text({ tokens = 3400, cost = 0, unpriced = 1 }), '3.4k tok · cost unknown', 'unpriced')
  -- A review nobody answered: the typed cause decides, not the words.
  local unanswered = { state = 'waiting_user', reason = 'Keine Antwort', cause = 'unanswered_review' }
  H.check(progress.is_unanswered_review(unanswered), 'by the cause')
  unanswered.cause = 'waiting_for_user'
  unanswered.reason = 'No answer from you in 10 minutes'
  H.check(not progress.is_unanswered_review(unanswered), 'another wait, whatever its words')
  unanswered.cause = nil
  H.check(progress.is_unanswered_review(unanswered), 'an older server: by its words')
end)
