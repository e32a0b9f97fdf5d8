-- Edit the proposal before accepting it (issue 35 point 6), from the
-- preview's `e`. The model's edit fixes total() and slips a modeline into
-- cart.py. `e` opens the proposal in a tab page of its own
-- (rein://proposal/cart.py, Python, editable, beside rein://current/cart.py
-- in diff mode) without reading the modeline; `:q` there leaves the edit
-- waiting and shows the preview again; the user deletes the modeline,
-- writes the product the other way round and accepts with `:w`. The
-- buffer and the disk hold exactly their text, the task goes back to where
-- it was, and the model hears that the user changed its proposal (the
-- scenario goes on only then; tests/nvim.rs reads the diff it got in the
-- trace).
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local MODELINE = '# vim: set filetype=hostile tabstop=3 :'
local UNFIXED = '    return sum(item.qty for item in items)\n\n\ndef count'
local MINE = '    return sum(item.qty * item.price for item in items)\n\n\ndef count'

--- The buffers whose name starts with `prefix`.
local function named(prefix)
  local found = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.startswith(vim.api.nvim_buf_get_name(b), prefix) then
      table.insert(found, b)
    end
  end
  return found
end

H.run(function()
  local original = H.disk('cart.py')
  local expected = original:gsub(vim.pesc(UNFIXED), (MINE:gsub('%%', '%%%%')), 1)
  H.check(expected ~= original, 'the fixture has the bug')
  local approval = require('rein.approval')

  -- A user with modelines on (Neovim's default, except for root), and a
  -- live modeline: a file read with :edit takes it.
  vim.o.modeline = true
  local probe = vim.fn.tempname() .. '.py'
  vim.fn.writefile({ '"""Probe."""', MODELINE, 'x = 1' }, probe)
  vim.cmd('edit ' .. vim.fn.fnameescape(probe))
  H.eq({ vim.bo.tabstop, vim.bo.filetype }, { 3, 'hostile' }, 'the modeline, read from a file')
  vim.cmd('bwipeout!')
  vim.fn.delete(probe)

  H.open('tests/test_cart.py')
  local origin = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_cursor(0, { 8, 8 })
  vim.cmd('Rein fix')
  local win = H.wait_preview()
  local footer = vim.api.nvim_win_get_config(win).footer
  footer = type(footer) == 'table' and footer[1][1] or footer
  H.contains(footer, 'e edit', 'the footer names the key')

  -- `e`: the proposal, to edit.
  H.keys('e')
  H.eq(#vim.api.nvim_list_tabpages(), 2, 'the proposal opens in a tab page of its own')
  local proposal = vim.api.nvim_get_current_buf()
  H.eq(vim.api.nvim_buf_get_name(proposal), 'rein://proposal/cart.py', 'its name')
  H.eq(vim.bo[proposal].filetype, 'python', "the file's filetype")
  H.eq(vim.bo[proposal].buftype, 'acwrite', ':w there is Rein’s')
  H.eq(vim.bo[proposal].modeline, false, 'modelines off')
  H.check(vim.bo[proposal].tabstop ~= 3, "the proposal's modeline was not applied")
  H.check(vim.bo[proposal].modifiable and not vim.bo[proposal].modified, 'editable, unchanged')
  local lines = vim.api.nvim_buf_get_lines(proposal, 0, -1, false)
  H.eq(lines[2], MODELINE, 'the proposal as the model made it')
  H.contains(
    table.concat(lines, '\n'),
    'return sum(item.price * item.qty for item in items)',
    'the proposal'
  )
  H.check(
    #vim.lsp.get_clients({ bufnr = proposal }) == 0,
    'no language server attached to the proposal'
  )
  local current = named('rein://current/cart.py')[1]
  H.check(current, 'the file as it is now, beside it')
  H.check(not vim.bo[current].modifiable, 'the current side is read-only')
  H.check(vim.wo[vim.fn.bufwinid(current)].diff and vim.wo.diff, 'the two sides in diff mode')
  H.contains(vim.wo.winbar, ':w accepts your version', 'the winbar says how to accept')
  H.check(approval.visible(), 'the edit counts as on screen while its proposal is edited')
  H.eq(#approval.history, 0, 'nothing decided by opening it')

  -- Closed without accepting: the edit waits, its preview is back.
  H.keys(':q<CR>')
  H.wait('the preview again', function()
    return approval.current() and approval.current().win ~= nil
  end)
  H.eq(#vim.api.nvim_list_tabpages(), 1, 'the tab page closed')
  H.eq(#named('rein://'), 0, 'the proposal buffers went with it')
  H.eq(#approval.history, 0, 'closing decided nothing')
  H.eq(approval.pending(), 1, 'the edit still waits')

  -- Again: edit and accept with :w.
  H.keys('e')
  proposal = vim.api.nvim_get_current_buf()
  H.eq(vim.api.nvim_buf_get_name(proposal), 'rein://proposal/cart.py', 'the proposal again')
  H.keys('2Gdd')
  H.keys(':%s/item\\.price \\* item\\.qty/item.qty * item.price/<CR>')
  H.check(vim.bo[proposal].modified, 'the user changed it')
  H.keys(':w<CR>')

  local task =
    H.wait_state({ 'succeeded', 'failed', 'cancelled', 'budget_exhausted', 'waiting_user' })
  H.eq(task.state, 'succeeded', 'final state (the model heard the user changed its proposal)')
  H.eq({ approval.history[1].applied, approval.history[1].how }, { true, 'edited' }, 'the decision')
  local cart = H.buffer('cart.py')
  H.check(cart, 'cart.py was opened to apply the edit')
  H.eq(H.text(cart), expected, "cart.py buffer: the user's version, byte for byte")
  H.eq(H.disk('cart.py'), expected, "cart.py on disk: the user's version")
  H.check(not H.disk('cart.py'):find('vim:', 1, true), 'no modeline in the file')
  H.wait('the proposal to close', function()
    return #named('rein://') == 0 and #vim.api.nvim_list_tabpages() == 1
  end)
  H.eq(vim.api.nvim_get_current_win(), origin, 'back in the window it was opened from')
end)
