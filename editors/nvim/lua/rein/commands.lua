-- `:Rein {subcommand}`: fix, setup, ask, answer, cancel, resume, trace, review,
-- verification, status, restart, trust, untrust, undo (`undo.lua`). Each subcommand is a function of the command's
-- arguments; the server does the work (test finding included).

local lsp = require('rein.lsp')
local progress = require('rein.progress')

local M = {}

local function notify(msg, level)
  vim.notify('Rein: ' .. msg, level or vim.log.levels.INFO)
end

local function started(client, what)
  return function(result)
    local id = type(result) == 'table' and result.taskId or nil
    if type(id) ~= 'string' then
      notify('the server did not start a task: ' .. vim.inspect(result), vim.log.levels.ERROR)
      return
    end
    progress.started(id, client.id, what)
    notify(('started: %s'):format(what))
  end
end

--- A task id from the arguments, else the one the user most likely means:
--- the only candidate, or one picked from a list.
local function with_task(arg, candidates, what, fn)
  if arg and arg ~= '' then
    local known = progress.tasks[arg]
    fn(arg, known)
    return
  end
  if #candidates == 0 then
    notify('no task to ' .. what, vim.log.levels.WARN)
    return
  end
  if #candidates == 1 then
    fn(candidates[1].id, candidates[1])
    return
  end
  vim.ui.select(candidates, {
    prompt = 'Rein: which task to ' .. what .. '?',
    format_item = function(t)
      return ('%s  %s  %s'):format(t.id, t.state, t.title or '')
    end,
  }, function(choice)
    if choice then
      fn(choice.id, choice)
    end
  end)
end

--- The client that owns a task, else the current buffer's; says why when
--- there is none (unless `quiet`).
local function client_for(task, quiet)
  if task and task.client_id then
    local client = vim.lsp.get_client_by_id(task.client_id)
    if client then
      return client
    end
  end
  local client, err = lsp.client()
  if not client and not quiet then
    notify(err, vim.log.levels.ERROR)
  end
  return client
end

local function need_client(bufnr)
  local client, err = lsp.client(bufnr)
  if not client then
    notify(err, vim.log.levels.ERROR)
  end
  return client
end

--- Ids of the tasks with a trace in the project's `.rein/traces/` (tasks of
--- earlier sessions included).
local function traced_ids()
  local client = lsp.client()
  local root = client and client.root_dir or vim.fn.getcwd()
  local ids = {}
  for _, file in ipairs(vim.fn.glob(root .. '/.rein/traces/*.jsonl', false, true)) do
    table.insert(ids, vim.fn.fnamemodify(file, ':t:r'))
  end
  return ids
end

--- Task ids for completion: this session's, then those with a trace.
local function task_ids()
  local ids = {}
  for _, t in ipairs(progress.all()) do
    table.insert(ids, t.id)
  end
  for _, id in ipairs(traced_ids()) do
    if not vim.list_contains(ids, id) then
      table.insert(ids, id)
    end
  end
  return ids
end

--- :Rein fix — on a line with an error or warning (vim.diagnostic), "Fix
--- this error with Rein" (`rein.fixError`, checked by the checker that
--- reports it); else the "Fix test … with Rein" code action of the test
--- under the cursor.
function M.fix()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = need_client(bufnr)
  if not client then
    return
  end
  if not client.attached_buffers[bufnr] then
    notify(
      'Rein is not attached to this buffer; open a file of the project',
      vim.log.levels.ERROR
    )
    return
  end
  local params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  params.context = { diagnostics = require('rein.diagnostics').at_line(bufnr, line), triggerKind = 1 }
  require('rein.provider_setup').ensure(client, function()
    M.fix_with(client, bufnr, params)
  end)
end

--- :Rein fix once a provider is known to be configured.
function M.fix_with(client, bufnr, params)
  client:request('textDocument/codeAction', params, function(err, actions)
    if err then
      notify('code actions failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    local by_command, cannot = {}, nil
    for _, action in ipairs(type(actions) == 'table' and actions or {}) do
      -- A CodeAction carries its Command; a bare Command is one.
      local command = type(action.command) == 'table' and action.command or action
      if type(action.disabled) == 'table' then
        cannot = cannot or action.disabled.reason
      elseif type(command.command) == 'string' and not by_command[command.command] then
        by_command[command.command] = { title = action.title, command = command }
      end
    end
    for _, name in ipairs({ 'rein.fixError', 'rein.fixTest' }) do
      local found = by_command[name]
      if found and type(found.command.arguments) == 'table' then
        local title = found.title or name
        lsp.execute(client, name, found.command.arguments[1], started(client, title), bufnr)
        return
      end
    end
    if cannot then
      notify('cannot check the error on this line: ' .. cannot, vim.log.levels.WARN)
    else
      notify('no error or test under the cursor: put it on an error or inside a test', vim.log.levels.WARN)
    end
  end, bufnr)
end

--- `rein.fixTest` / `rein.fixError` run by Neovim itself: a "▶ Fix with
--- Rein" lens (`vim.lsp.codelens.run()`) or a code action picked through
--- `vim.lsp.buf.code_action()`. Like :Rein fix: a provider first, then the
--- server's command with its own argument, and the task followed.
function M.fix_command(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return
  end
  local arg = type(command.arguments) == 'table' and command.arguments[1] or nil
  if type(arg) ~= 'table' then
    notify(command.command .. ' without its argument', vim.log.levels.ERROR)
    return
  end
  local title = type(arg.testName) == 'string' and ('Fix test ' .. arg.testName) or command.title or command.command
  require('rein.provider_setup').ensure(client, function()
    lsp.execute(client, command.command, arg, started(client, title), ctx.bufnr)
  end)
end

--- The LSP range of lines `line1`..`line2` (1-based, inclusive).
local function line_range(bufnr, line1, line2, encoding)
  local last = vim.api.nvim_buf_get_lines(bufnr, line2 - 1, line2, false)[1] or ''
  return {
    start = { line = line1 - 1, character = 0 },
    ['end'] = { line = line2 - 1, character = vim.str_utfindex(last, encoding) },
  }
end

--- :[range]Rein ask [instruction] — a task from an instruction, about the
--- current file (and the lines of the range).
function M.ask(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = need_client(bufnr)
  if not client then
    return
  end
  local function run(instruction)
    instruction = vim.trim(instruction or '')
    if instruction == '' then
      return
    end
    local arg = { instruction = instruction }
    if client.attached_buffers[bufnr] then
      arg.uri = vim.uri_from_bufnr(bufnr)
      if opts.range and opts.range > 0 then
        arg.range = line_range(bufnr, opts.line1, opts.line2, client.offset_encoding)
      end
    end
    lsp.execute(client, 'rein.runTask', arg, started(client, instruction), bufnr)
  end
  if opts.rest ~= '' then
    run(opts.rest)
  else
    vim.ui.input({ prompt = 'Ask Rein: ' }, run)
  end
end

--- The "Ask Rein…" code action (`rein.runTask` without an instruction):
--- it carries the place; the user gives the words. Registered as the
--- client's handler of that command, so the server never sees it bare.
function M.ask_action(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return
  end
  local arg = vim.deepcopy(type(command.arguments) == 'table' and command.arguments[1] or {})
  local function run(instruction)
    instruction = vim.trim(instruction or '')
    if instruction == '' then
      return
    end
    arg.instruction = instruction
    lsp.execute(client, 'rein.runTask', arg, started(client, instruction), ctx.bufnr)
  end
  if type(arg.instruction) == 'string' and vim.trim(arg.instruction) ~= '' then
    run(arg.instruction)
  else
    vim.ui.input({ prompt = 'Ask Rein: ' }, run)
  end
end

--- :Rein answer [text] — answers the question of a task waiting for you
--- (not a review nor a command approval: those have their own prompts).
function M.answer(opts)
  local waiting = vim.tbl_filter(progress.is_question, progress.active())
  with_task(nil, waiting, 'answer', function(id, task)
    local client = client_for(task)
    if not client then
      return
    end
    local function send(text)
      if not text or vim.trim(text) == '' then
        return
      end
      lsp.execute(client, 'rein.answer', { taskId = id, text = text }, function()
        notify('answer sent to task ' .. id)
      end)
    end
    if opts.rest ~= '' then
      send(opts.rest)
    else
      vim.ui.input({ prompt = (task and task.question or 'Answer') .. '\n> ' }, send)
    end
  end)
end

--- :Rein cancel [task] (Neovim has no cancel button on progress).
function M.cancel(opts)
  with_task(opts.rest, progress.active(), 'cancel', function(id, task)
    local client = client_for(task)
    if not client then
      return
    end
    -- So that an edit withdrawn for it says why (rein.approval).
    if task then
      task.cancel_requested = true
    end
    lsp.execute(client, 'rein.cancelTask', { taskId = id }, function(result)
      if type(result) == 'table' and result.cancelled == false then
        notify('task ' .. id .. ' is not running here', vim.log.levels.WARN)
      end
    end)
  end)
end

--- :Rein resume [task] — a task waiting for you, or left by a server that
--- died. A task waiting for a review or an approval still runs: not one.
function M.resume(opts)
  local waiting = vim.tbl_filter(progress.is_question, progress.active())
  with_task(opts.rest, waiting, 'resume', function(id, task)
    local client = client_for(task)
    if not client then
      return
    end
    lsp.execute(client, 'rein.resumeTask', { taskId = id }, started(client, 'resume ' .. id))
  end)
end

--- :Rein trace [task] [text|html]
function M.trace(opts)
  local args = vim.split(opts.rest, '%s+', { trimempty = true })
  local format = nil
  if args[#args] == 'html' or args[#args] == 'text' then
    format = table.remove(args)
  end
  local candidates = progress.all()
  for _, id in ipairs(traced_ids()) do
    if not progress.tasks[id] then
      table.insert(candidates, { id = id, state = 'earlier' })
    end
  end
  with_task(args[1], candidates, 'trace', function(id, task)
    local client = client_for(task, true)
    local root = client and client.root_dir or vim.fn.getcwd()
    require('rein.trace').show(id, root, format)
  end)
end

--- :Rein show [task] — the task (the current one, else picked) in a
--- buffer below, kept up to date while it runs.
function M.show(opts)
  local candidates = progress.all()
  for _, id in ipairs(traced_ids()) do
    if not progress.tasks[id] then
      table.insert(candidates, { id = id, state = 'earlier' })
    end
  end
  local current = progress.current()
  local arg = opts.rest ~= '' and opts.rest or (current and current.id) or nil
  with_task(arg, candidates, 'show', function(id, task)
    local client = client_for(task, true)
    local root = client and client.root_dir or vim.fn.getcwd()
    require('rein.live').show(id, root)
  end)
end

--- :Rein verification [task] — what the verifier checked, with evidence.
function M.verification(opts)
  local checked = vim.tbl_filter(function(t)
    return t.verification ~= nil
  end, progress.all())
  with_task(opts.rest, checked, 'show the verification of', function(id)
    local task = progress.tasks[id]
    if not task or not task.verification then
      notify('no verification received for task ' .. id, vim.log.levels.WARN)
      return
    end
    require('rein.trace').show_verification(task.verification)
  end)
end

--- :Rein review — the edit waiting for approval, again.
function M.review()
  require('rein.approval').review()
end

--- :Rein restart — starts Rein again for every buffer it serves: after the
--- server died (Neovim 0.11 has no `:lsp restart`), or to pick up a new
--- binary. The new server takes over the tasks the old one left running,
--- with the buffers as they are now (an applied edit not saved included).
function M.restart()
  local old = vim.lsp.get_clients({ name = lsp.name })
  for _, client in ipairs(old) do
    client:stop(true)
  end
  -- A client still stopping would be reused instead of a new one.
  local stopped = vim.wait(5000, function()
    return vim.iter(old):all(function(c)
      return c:is_stopped()
    end)
  end, 20)
  if not stopped then
    notify('the old server did not stop; try again', vim.log.levels.ERROR)
    return
  end
  vim.lsp.enable(lsp.name)
  -- `vim.lsp.enable` attaches the loaded buffers itself only once Neovim
  -- has finished starting up.
  if vim.v.vim_did_enter ~= 1 then
    vim.cmd.doautoall('nvim.lsp.enable FileType')
  end
  notify(#old > 0 and 'restarted' or 'started')
end

--- :Rein trust / :Rein untrust — whether the project's own
--- `.rein/config.toml` counts (as it is now: a changed file asks again).
--- Until it is trusted it may only tighten (deny rules, lower budgets).
local function set_trust(trusted)
  local client = need_client()
  if not client then
    return
  end
  lsp.execute(client, 'rein.trustWorkspace', { trusted = trusted }, function(result)
    if type(result) ~= 'table' then
      return
    end
    if result.message then
      notify(result.message)
      return
    end
    local grants = result.grants or {}
    local what = #grants > 0 and (':\n  • ' .. table.concat(grants, '\n  • ')) or ''
    notify((trusted and "trusted this project's settings" or "this project's settings are not trusted") .. what)
  end)
end

function M.trust()
  set_trust(true)
end

function M.untrust()
  set_trust(false)
end

--- :Rein status — every task of this session: what it waits for (or its
--- outcome, or what it does), tokens and cost, and the model's latest line.
function M.status()
  local lines = {}
  local answered
  for _, t in ipairs(progress.all()) do
    local what = progress.waiting_text(t)
    if what then
      what = what .. progress.waiting_hint(t)
      if progress.is_question(t) and t.question then
        what = what .. ': ' .. t.question
      end
    elseif t.step and not progress.is_terminal(t.state) then
      what = t.step
    elseif t.reason or not t.message then
      what = t.reason or t.title or ''
    end
    -- The server's progress message has its own tokens and cost.
    if what and (t.tokens > 0 or t.cost > 0 or (t.unpriced or 0) > 0) then
      what = what .. ' · ' .. progress.spent_text(t)
    end
    what = what or t.message
    table.insert(lines, ('%s  %-16s %s'):format(t.id, t.state, what))
    -- The model's latest line (untrusted, kept inert).
    if t.said then
      table.insert(lines, '  said: ' .. t.said)
    end
    if require('rein.answer').is_answer(t) then
      table.insert(lines, '  ' .. require('rein.answer').status_line(t))
      answered = answered or t
    end
  end
  if answered then
    -- The latest answer in full, below (a notification would cut it).
    pcall(require('rein.answer').open, answered)
  end
  if #lines == 0 then
    lines = { 'no Rein task in this session' }
  end
  vim.notify(table.concat(lines, '\n'), vim.log.levels.INFO)
end

M.subcommands = {
  fix = M.fix,
  setup = function()
    require('rein.provider_setup').run()
  end,
  install = function()
    require('rein.install').run()
  end,
  ask = M.ask,
  answer = M.answer,
  cancel = M.cancel,
  resume = M.resume,
  trace = M.trace,
  show = M.show,
  verification = M.verification,
  review = M.review,
  status = M.status,
  restart = M.restart,
  trust = M.trust,
  untrust = M.untrust,
  undo = function(opts)
    require('rein.undo').run(opts)
  end,
}

--- The :Rein command.
function M.run(opts)
  local sub, rest = (opts.args or ''):match('^%s*(%S*)%s*(.-)%s*$')
  local fn = M.subcommands[sub]
  if not fn then
    local names = vim.tbl_keys(M.subcommands)
    table.sort(names)
    notify(
      (sub == '' and 'which subcommand? ' or ('unknown subcommand %q; '):format(sub))
        .. table.concat(names, ', '),
      vim.log.levels.ERROR
    )
    return
  end
  opts.rest = rest
  fn(opts)
end

--- Completion for :Rein.
function M.complete(arglead, cmdline)
  local words = vim.split(cmdline:gsub('^%S*Rein!?%s*', ''), '%s+')
  local candidates
  if #words <= 1 then
    candidates = vim.tbl_keys(M.subcommands)
    table.sort(candidates)
  elseif
    #words == 2 and vim.list_contains({ 'cancel', 'resume', 'trace', 'verification', 'undo' }, words[1])
  then
    candidates = task_ids()
  elseif #words == 3 and words[1] == 'trace' then
    candidates = { 'text', 'html' }
  else
    return {}
  end
  return vim.tbl_filter(function(c)
    return vim.startswith(c, arglead)
  end, candidates)
end

return M
