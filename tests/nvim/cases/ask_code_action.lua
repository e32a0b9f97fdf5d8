-- The "Ask Rein…" code action carries the place, not the words: the
-- plugin's client-side handler of rein.runTask asks for the instruction
-- (vim.ui.input) and sends it with the place, so the task starts. (Before,
-- the bare command reached the server and failed: "needs an instruction".)
-- It is offered on a selection only: with a bare cursor the light bulb
-- would be on every line (`:Rein ask` is the way without a selection).
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

--- The titles of the code actions the server offers at `range` (0-based
--- LSP positions) of the current buffer.
local function titles_at(range)
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(0),
    range = range,
    context = { diagnostics = {} },
  }
  local reply = H.client():request_sync('textDocument/codeAction', params, 10000, 0)
  H.check(reply and not reply.err, 'textDocument/codeAction failed: ' .. vim.inspect(reply))
  local titles = {}
  for _, action in ipairs(reply.result or {}) do
    table.insert(titles, action.title)
  end
  return titles
end

H.run(function()
  local prompts = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(prompts, opts.prompt)
    on_confirm('Explain total()')
  end

  H.open('cart.py')
  -- A bare cursor on the docstring of total(): nothing to offer.
  vim.api.nvim_win_set_cursor(0, { 12, 4 })
  local here = { line = 11, character = 4 }
  H.eq(titles_at({ start = here, ['end'] = here }), {}, 'code actions at a bare cursor')

  -- The docstring selected (rows 1-based, columns 0-based, as marks are).
  vim.lsp.buf.code_action({
    range = { start = { 12, 4 }, ['end'] = { 12, 40 } },
    filter = function(action)
      return action.title == 'Ask Rein…'
    end,
    apply = true,
  })

  local task =
    H.wait_state({ 'succeeded', 'failed', 'waiting_user', 'cancelled', 'budget_exhausted' })
  H.eq(prompts, { 'Ask Rein: ' }, 'the instruction was asked for')
  -- Off script (the instruction did not reach the goal) would end it
  -- waiting for the user.
  H.eq(task.state, 'succeeded', 'final state (' .. tostring(task.reason) .. ')')
end)
