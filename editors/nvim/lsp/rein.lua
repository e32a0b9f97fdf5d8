-- The `rein` configuration for vim.lsp.config, read when a buffer of one of
-- its filetypes first opens (so nothing of Rein loads before that).
return require('rein.lsp').config()
