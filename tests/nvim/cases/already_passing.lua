-- `:Rein fix` on a test that already passes (the project's cart.py is
-- already fixed): the task ends at once, succeeded, and the user is told
-- it was already passing; no edit is proposed, nothing changes. The
-- scenario has no reply: a model call would fail the task.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

-- As the user reads it: the server marks the test's name as code
-- (`TestCart.test_total`); an editor that cannot show Markdown shows it
-- plain, so the backticks are not what is checked.
local MESSAGE = 'already passing: TestCart.test_total passes; nothing to change'

local function plain(text)
  return (tostring(text):gsub('`', ''))
end

--- Whether some notification says `part` (backticks aside).
local function told(part)
  for _, n in ipairs(H.notes) do
    if plain(n.msg):find(part, 1, true) then
      return true
    end
  end
  return false
end

H.run(function()
  local cart = H.disk('cart.py')
  H.open('tests/test_cart.py')
  -- Inside test_total.
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')

  local task =
    H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'succeeded', 'final state (' .. tostring(task.reason) .. ')')
  H.eq(plain(task.reason), MESSAGE, 'the reason')
  -- Told in the user's words: not "succeeded", which sounds like a fix.
  H.check(told(MESSAGE), 'the user was told it already passes')
  H.check(not told(task.id), 'the message names the goal, not the task id')
  H.check(not told('succeeded'), 'no "succeeded" for a test that needed no fix')
  local status = plain(require('rein').status())
  H.check(vim.startswith(status, 'Rein: ' .. MESSAGE .. ' · '), 'status line after: ' .. status)
  H.eq(#require('rein.approval').history, 0, 'no edit was proposed')
  H.check(H.buffer('cart.py') == nil, 'cart.py was never opened')
  H.eq(H.disk('cart.py'), cart, 'cart.py on disk')

  -- What proved it.
  vim.cmd('Rein verification')
  local verification = H.wait_scratch('rein://verification/')
  H.contains(verification, 'verification passed', ':Rein verification')
  H.contains(verification, 'exit 0', ':Rein verification evidence')
end)
