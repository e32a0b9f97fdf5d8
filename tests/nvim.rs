//! Neovim end to end: the real Neovim 0.11 with the plugin in `editors/nvim` driving the real `rein lsp` (issue 7; being built).
