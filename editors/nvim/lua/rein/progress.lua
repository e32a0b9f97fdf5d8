-- What Rein's tasks are doing: fed by `rein/taskStatus`, `$/progress`
-- (through the LspProgress autocmd) and `rein/verification`; read by the
-- statusline component, the commands and `vim.notify` on each outcome.

local text = require('rein.text')

local M = {}

local TERMINAL = {
  succeeded = true,
  unverified = true,
  failed = true,
  cancelled = true,
  budget_exhausted = true,
}

--- Tasks by id: `{id, client_id, title, state, reason, turn, max_turns,
--- tokens, cost, unpriced, waiting_for, step, said, message, question,
--- verification, cancel_requested, seq}`. `waiting_for` (`{kind, detail}`,
--- kind 'review' | 'approval' | 'answer') is set while a running task
--- waits for the user; `reason` and `question` are plain (no Markdown
--- backticks). `step` is what it does now in the user's words ("running
--- tests", "waiting for you · review cart.py"; nil once it ended), `said`
--- the model's latest line: both untrusted, kept inert.
M.tasks = {}

local seq = 0
local set_up = false

--- `Rein: …` once: a message that starts with Rein is not prefixed again.
function M.rein_says(msg)
  return msg:match('^Rein%f[%W]') and msg or ('Rein: ' .. msg)
end

--- The task as the user knows it: its goal ("Fix TestCart.test_total"),
--- one line, short; the id only when the goal is not known yet.
function M.name(t)
  local title = type(t.title) == 'string' and vim.trim(t.title:gsub('%s+', ' ')) or ''
  if title == '' then
    return 'task ' .. t.id
  end
  if #title > 60 then
    title = vim.fn.strcharpart(title, 0, 59) .. '…'
  end
  return title
end

local function notify(msg, level)
  if require('rein.config').get().notify then
    vim.notify(M.rein_says(msg), level or vim.log.levels.INFO)
  end
end

local function changed(task)
  vim.schedule(function()
    pcall(vim.api.nvim_exec_autocmds, 'User', {
      pattern = 'ReinStatus',
      modeline = false,
      data = task and { task_id = task.id, state = task.state } or nil,
    })
    pcall(vim.cmd.redrawstatus)
  end)
end

local function task(id, client_id)
  local t = M.tasks[id]
  if not t then
    t = { id = id, state = 'queued', turn = 0, max_turns = 0, tokens = 0, cost = 0 }
    M.tasks[id] = t
  end
  if client_id then
    t.client_id = client_id
  end
  seq = seq + 1
  t.seq = seq
  return t
end

function M.is_terminal(state)
  return TERMINAL[state] == true
end

--- A task the server just started (the answer to a command).
function M.started(id, client_id, title)
  if type(id) ~= 'string' then
    return
  end
  local t = task(id, client_id)
  t.title = title or t.title
  changed(t)
end

local function tokens(n)
  n = tonumber(n) or 0
  if n >= 1000 then
    return ('%.1fk tok'):format(n / 1000)
  end
  return ('%d tok'):format(n)
end

local function number(v)
  return type(v) == 'number' and v or 0
end

--- `$0.03`; `cost unknown` when no call was priced, `≥ $0.03` when some
--- were not: never `$0.00` for a cost Rein does not know.
function M.cost_text(t)
  if (t.unpriced or 0) > 0 then
    if (t.cost or 0) > 0 then
      return ('≥ $%.2f'):format(t.cost)
    end
    return 'cost unknown'
  end
  return ('$%.2f'):format(t.cost or 0)
end

--- Tokens and cost, as the status line shows them; no cost before the
--- model's first reply (nothing is known yet: `$0.00` would be a guess).
function M.spent_text(t)
  if number(t.tokens) == 0 and number(t.cost) == 0 and number(t.unpriced) == 0 then
    return tokens(t.tokens)
  end
  return ('%s · %s'):format(tokens(t.tokens), M.cost_text(t))
end

--- The state in the user's words: an answer, a test that already
--- passed, a change the user rejected are no "succeeded" / "cancelled".
--- Whether `t` ended for `cause`: the server's typed cause decides; the
--- reason's words (`pattern`) only for a server that sends no cause.
function M.ended_for(t, cause, pattern)
  if type(t.cause) == 'string' then
    return t.cause == cause
  end
  return type(t.reason) == 'string' and t.reason:match(pattern) ~= nil
end

local function state_words(t)
  if t.state == 'succeeded' and M.ended_for(t, 'answered', '^answered') then
    return 'answered'
  elseif t.state == 'succeeded' and M.ended_for(t, 'already_met', '^already passing') then
    return 'already passing'
  elseif t.state == 'cancelled' and M.ended_for(t, 'rejected', '^You rejected the change') then
    return 'stopped'
  end
  return t.state
end

local function outcome_text(t)
  local spent = M.spent_text(t)
  local words = state_words(t)
  -- Those ends are told in the server's reason, in the user's words.
  if words ~= t.state then
    return ('%s · %s'):format(t.reason, spent)
  end
  local reason = t.reason and t.reason ~= '' and (': ' .. t.reason) or ''
  if t.state == 'succeeded' then
    return ('%s%s · %s'):format(t.state, reason, spent)
  end
  return t.state .. reason
end

--- What a waiting task waits for, from `waitingFor` (nil if malformed).
local function waiting_for(v)
  if type(v) ~= 'table' or type(v.kind) ~= 'string' then
    return nil
  end
  return { kind = v.kind, detail = type(v.detail) == 'string' and v.detail or '' }
end

--- Whether a task waits for an answer to a question (or stopped, for the
--- user to look at): a `waiting_user` status without `waitingFor`, or one
--- waiting for an answer. A review or an approval is not a question.
function M.is_question(t)
  return t.state == 'waiting_user'
    and (t.waiting_for == nil or t.waiting_for.kind == 'answer')
    and not M.is_unanswered_review(t)
end

--- Whether a task stopped because nobody answered its review in time
--- (the cause `unanswered_review`; an older server's words "No answer
--- from you in …"): no rejection, and no question either: it waits to be
--- resumed.
function M.is_unanswered_review(t)
  return t.state == 'waiting_user'
    and t.waiting_for == nil
    and type(t.reason) == 'string'
    and M.ended_for(t, 'unanswered_review', '^No answer from you')
end

--- What a waiting task waits for, in words ("waiting for you · review
--- cart.py", the server's step), or nil when it does not wait.
function M.waiting_text(t)
  if t.state ~= 'waiting_user' then
    return nil
  end
  if M.is_unanswered_review(t) then
    return 'no answer to the review'
  end
  local w = t.waiting_for
  -- The server names the wait as every client shows it.
  if w and t.step then
    return t.step
  end
  -- The same words without the server's (a question's first status).
  local detail = w and text.inert(w.detail) or ''
  if w and w.kind == 'review' then
    return 'waiting for you · review ' .. (detail ~= '' and detail or 'an edit')
  elseif w and w.kind == 'approval' then
    return 'waiting for you · allow ' .. (detail ~= '' and detail or 'a command')
  end
  return 'waiting for you · answer the question'
end

--- The longest `said` kept (the server sends at most 160 characters).
local SAID_BYTES = 1024

--- Untrusted one-line text from the server, inert and bounded (nil if
--- absent or empty).
local function line_of(v, max_bytes)
  if type(v) ~= 'string' or v == '' then
    return nil
  end
  local s = text.inert((v:gsub('[\r\n\t]', ' ')))
  if #s > max_bytes then
    -- Cut before the character that byte `max_bytes + 1` is part of.
    local next_char = max_bytes + 1 + vim.str_utf_start(s, max_bytes + 1)
    s = s:sub(1, next_char - 1) .. '…'
  end
  return s
end

--- `rein/taskStatus {taskId, state, reason?, turn, maxTurns, inputTokens,
--- outputTokens, costUsd, unpricedCalls, waitingFor?, step?, said?,
--- summary?}`.
--- What fixes the cause of a task's end, as a line for its message: set-up
--- after a model that failed, the budget settings after one ran out.
--- Never guessed from the words: a server that sends no cause gets none.
function M.fix_hint(t)
  if t.cause == 'model_failed' then
    return '\n(:Rein setup to set up the model; :checkhealth rein)'
  elseif t.cause == 'budget' then
    return '\n(raise maxTurns, maxMinutes, maxCostUsd or maxTokens in settings)'
  elseif t.cause == 'internal' then
    return '\n(:checkhealth rein; the server log: vim.lsp.log)'
  end
  return ''
end

function M.on_task_status(_, params, ctx)
  if
    type(params) ~= 'table'
    or type(params.taskId) ~= 'string'
    or type(params.state) ~= 'string'
  then
    return
  end
  local t = task(params.taskId, ctx and ctx.client_id)
  local was = t.state
  local was_question = M.is_question(t)
  t.state = params.state
  -- Plain text: nothing here renders Markdown.
  t.reason = type(params.reason) == 'string' and text.plain(params.reason) or nil
  t.turn = number(params.turn)
  t.max_turns = number(params.maxTurns)
  t.tokens = number(params.inputTokens) + number(params.outputTokens)
  t.cost = number(params.costUsd)
  t.unpriced = number(params.unpricedCalls)
  t.waiting_for = t.state == 'waiting_user' and waiting_for(params.waitingFor) or nil
  -- What it does now: only while it runs (a final status has none).
  t.step = line_of(params.step, 512)
  -- The model's latest line, kept for a status that has none; plain like
  -- its other words here (nothing renders Markdown).
  t.said = line_of(type(params.said) == 'string' and text.plain(params.said), SAID_BYTES)
    or t.said
  -- The model's last words (untrusted), on the final status only.
  if type(params.summary) == 'string' then
    t.summary = params.summary
  end
  -- Why it stopped, typed (final status only): what fixes it is offered.
  t.cause = type(params.cause) == 'string' and params.cause or nil
  if M.is_question(t) then
    -- The question comes as a plain waiting_user first, then again with
    -- `waitingFor: answer` (reason and all): told once, unless it changed.
    local question = t.reason or t.question
    if not was_question or question ~= t.question then
      notify(
        ('%s — the model asks: %s\n(answer with :Rein answer)'):format(M.name(t), question or '(no question)'),
        vim.log.levels.WARN
      )
    end
    t.question = question
  else
    t.question = nil
  end
  -- Told once (a later status repeats it).
  if M.is_unanswered_review(t) and t.reason ~= t.told_unanswered then
    t.told_unanswered = t.reason
    notify(('%s: %s'):format(M.name(t), t.reason), vim.log.levels.WARN)
  end
  if M.is_terminal(t.state) and not M.is_terminal(was) then
    local level = t.state == 'succeeded' and vim.log.levels.INFO
      or t.state == 'cancelled' and vim.log.levels.INFO
      or vim.log.levels.WARN
    local answer = require('rein.answer')
    if answer.is_answer(t) then
      -- The answer in full in a buffer; the notification stays short.
      notify(('%s: answered (shown below; :Rein status shows it again)'):format(M.name(t)), level)
      vim.schedule(function()
        pcall(answer.open, t)
      end)
    else
      notify(('%s: %s%s'):format(M.name(t), outcome_text(t), M.fix_hint(t)), level)
    end
    vim.schedule(function()
      local approval = require('rein.approval')
      approval.drop_task(t.id, t.state)
      if #M.active() == 0 then
        approval.reset_accept_all()
      end
    end)
  end
  changed(t)
end

--- `rein/verification {taskId, passed, detail, evidence}`: kept for
--- :Rein verification.
function M.on_verification(_, params, ctx)
  if type(params) ~= 'table' or type(params.taskId) ~= 'string' then
    return
  end
  local t = task(params.taskId, ctx and ctx.client_id)
  t.verification = params
  changed(t)
end

--- `window/showMessage`: the server's questions and errors. Shown as
--- notifications (Neovim's default only echoes them), pointing at the
--- Neovim command instead of VS Code's.
function M.on_show_message(_, params)
  if type(params) ~= 'table' or type(params.message) ~= 'string' then
    return vim.NIL
  end
  local message = params.message:gsub('the “Rein: Answer” command', ':Rein answer')
  local levels =
    { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
  local level = levels[params.type] or vim.log.levels.INFO
  -- Questions also come as a waiting_user status, which notifies.
  if not message:match('^Rein asks:') then
    vim.notify(M.rein_says(message), level)
  end
  return vim.NIL
end

--- The LspProgress autocmd, for Rein's tokens (`rein/<taskId>`).
local function on_progress(ev)
  local data = ev.data or {}
  local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
  if not require('rein.lsp').is_rein(client) then
    return
  end
  local params = data.params or {}
  local token = params.token
  local value = params.value
  if type(token) ~= 'string' or type(value) ~= 'table' then
    return
  end
  local id = token:match('^rein/(.+)$')
  if not id then
    return
  end
  local t = task(id, data.client_id)
  if value.kind == 'begin' then
    t.title = type(value.title) == 'string' and value.title or t.title
  elseif value.kind == 'report' and type(value.message) == 'string' then
    t.message = value.message
  end
  changed(t)
end

function M.setup()
  if set_up then
    return
  end
  set_up = true
  vim.api.nvim_create_autocmd('LspProgress', {
    group = vim.api.nvim_create_augroup('rein.progress', { clear = true }),
    callback = on_progress,
  })
end

local function by_recency(list)
  table.sort(list, function(a, b)
    return a.seq > b.seq
  end)
  return list
end

--- Tasks not over yet (running, queued, verifying, waiting for the user),
--- most recently updated first.
function M.active()
  local list = {}
  for _, t in pairs(M.tasks) do
    if not M.is_terminal(t.state) then
      table.insert(list, t)
    end
  end
  return by_recency(list)
end

--- Every task known, most recently updated first.
function M.all()
  local list = vim.tbl_values(M.tasks)
  return by_recency(list)
end

--- The task the statusline is about: the latest active one, else the
--- latest that ended.
function M.current()
  return M.active()[1] or M.all()[1]
end

--- How to get on with a wait: a review in a hidden preview, a question.
--- Empty when what the user needs is on screen (the preview, the choice of
--- a command approval).
function M.waiting_hint(t)
  if M.is_unanswered_review(t) then
    return ' (:Rein resume)'
  end
  local kind = t.waiting_for and t.waiting_for.kind
  if kind == 'review' then
    local approval = package.loaded['rein.approval']
    return (approval and approval.visible()) and '' or ' (:Rein review)'
  elseif kind == 'approval' then
    return ''
  end
  return ' (:Rein answer)'
end

--- The statusline text: empty when Rein has done nothing yet.
function M.status()
  local t = M.current()
  local approval = package.loaded['rein.approval']
  if
    approval
    and approval.pending() > 0
    and not approval.visible()
    and not (t and t.waiting_for and t.waiting_for.kind == 'review')
  then
    return 'Rein: an edit waits for you (:Rein review)'
  end
  if not t then
    return ''
  end
  if t.state == 'waiting_user' then
    return 'Rein: ' .. M.waiting_text(t) .. M.waiting_hint(t)
  end
  if M.is_terminal(t.state) then
    return 'Rein: ' .. outcome_text(t)
  end
  -- What it does now ("running tests · turn 2/20"); tokens and cost are
  -- in :Rein status.
  if t.step then
    if t.max_turns > 0 then
      return ('Rein: %s · turn %d/%d'):format(t.step, math.max(t.turn, 1), t.max_turns)
    end
    return 'Rein: ' .. t.step
  end
  if t.message then
    return 'Rein: ' .. t.message
  end
  return ('Rein: turn %d/%d · %s · %s'):format(
    math.max(t.turn, 1),
    t.max_turns,
    t.state,
    M.spent_text(t)
  )
end

return M
