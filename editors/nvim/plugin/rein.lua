-- Rein: the :Rein command, <Plug> mappings, and starting the server for
-- your project's files. Everything else loads on first use.
if vim.g.loaded_rein then
  return
end
vim.g.loaded_rein = true

if vim.fn.has('nvim-0.11') == 0 then
  vim.notify_once('Rein needs Neovim 0.11 or newer', vim.log.levels.WARN)
  return
end

vim.api.nvim_create_user_command('Rein', function(opts)
  require('rein.commands').run(opts)
end, {
  nargs = '*',
  range = true,
  desc = 'Rein: fix | ask | answer | cancel | resume | undo | trace | review | verification | status | restart',
  complete = function(arglead, cmdline)
    return require('rein.commands').complete(arglead, cmdline)
  end,
})

local plug = {
  { 'n', '<Plug>(rein-fix)', '<Cmd>Rein fix<CR>' },
  { 'n', '<Plug>(rein-ask)', '<Cmd>Rein ask<CR>' },
  { 'x', '<Plug>(rein-ask)', ':Rein ask<CR>' },
  { 'n', '<Plug>(rein-answer)', '<Cmd>Rein answer<CR>' },
  { 'n', '<Plug>(rein-cancel)', '<Cmd>Rein cancel<CR>' },
  { 'n', '<Plug>(rein-resume)', '<Cmd>Rein resume<CR>' },
  { 'n', '<Plug>(rein-undo)', '<Cmd>Rein undo<CR>' },
  { 'n', '<Plug>(rein-trace)', '<Cmd>Rein trace<CR>' },
  { 'n', '<Plug>(rein-review)', '<Cmd>Rein review<CR>' },
  { 'n', '<Plug>(rein-accept)', "<Cmd>lua require('rein').accept()<CR>" },
  { 'n', '<Plug>(rein-reject)', "<Cmd>lua require('rein').reject()<CR>" },
  { 'n', '<Plug>(rein-accept-all)', "<Cmd>lua require('rein').accept_all()<CR>" },
  { 'n', '<Plug>(rein-keep-some)', "<Cmd>lua require('rein').keep_some()<CR>" },
  {
    'n',
    '<Plug>(rein-reject-with-reason)',
    "<Cmd>lua require('rein').reject_with_reason()<CR>",
  },
}
for _, m in ipairs(plug) do
  vim.keymap.set(m[1], m[2], m[3], { silent = true, desc = 'Rein' })
end

if require('rein.config').get().enabled ~= false then
  vim.lsp.enable('rein')
end
