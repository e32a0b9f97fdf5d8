-- :checkhealth rein: the binary is found and answers --version, a real
-- `rein lsp` answers initialize and shuts down, the provider is reported
-- (the scripted one here) and a misspelt setting is pointed out; an MCP
-- server of the settings is listed with how its tools are named; neither
-- the API key nor a token written inline in a server's env is shown.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  local g = vim.g.rein
  g.settings.maxTurn = 5 -- a typo for maxTurns
  g.settings.apiKey = 'sk-rein-test-SECRET'
  g.settings.mcpServers = { notes = { command = 'cat', env = { NOTES_TOKEN = 'inline-SECRET-123' } } }
  vim.g.rein = g

  vim.cmd('checkhealth rein')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  H.contains(text, 'OK ' .. vim.env.REIN_NVIM_BIN .. ' (rein ', 'the binary')
  H.contains(text, 'OK the server answers initialize (rein ', 'the initialize round trip')
  H.contains(text, 'OK provider: the scripted demo model', 'the provider')
  H.contains(text, 'WARNING unknown settings (typos?): maxTurn', 'the misspelt setting')
  H.check(not text:find('ERROR', 1, true), 'no errors:\n' .. text)
  H.check(not text:find('SECRET', 1, true), 'the API key is not shown:\n' .. text)
  H.contains(text, '(set, hidden)', 'the API key is said to be set')
  H.contains(text, 'notes: starts ', 'the MCP server')
  H.contains(text, 'its tools are mcp__notes__<tool>', 'how its tools are named')
end)
