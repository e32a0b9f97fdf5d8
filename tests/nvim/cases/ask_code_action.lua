-- The "Ask Rein…" code action carries the place, not the words: the
-- plugin's client-side handler of rein.runTask asks for the instruction
-- (vim.ui.input) and sends it with the place, so the task starts. (Before,
-- the bare command reached the server and failed: "needs an instruction".)
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  local prompts = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(prompts, opts.prompt)
    on_confirm('Explain total()')
  end

  H.open('cart.py')
  vim.api.nvim_win_set_cursor(0, { 12, 0 })
  vim.lsp.buf.code_action({
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
