//! VS Code end to end: the extension in `editors/vscode` in real VS Code (code-server, headless Chromium) driving the real `rein lsp` (issue 7; being built).
