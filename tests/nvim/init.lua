-- The user's init.lua in the Neovim end-to-end tests (run with --cmd, so
-- before plugins load, as a real init.lua is): the binary under test and
-- the scripted model. Nothing else: the plugin must work with only this.
vim.g.rein = {
  cmd = { vim.env.REIN_NVIM_BIN, 'lsp' },
  settings = {
    provider = 'scripted',
    scenario = vim.env.REIN_NVIM_SCENARIO ~= '' and vim.env.REIN_NVIM_SCENARIO or nil,
  },
}
