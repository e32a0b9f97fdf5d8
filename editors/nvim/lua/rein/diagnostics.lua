-- The diagnostics under the cursor as LSP diagnostics, for the code action
-- context of `:Rein fix`: the server offers "Fix this error with Rein" on
-- those it can check with the checker that reports them.

local M = {}

local SEVERITY = vim.diagnostic.severity

--- One vim.Diagnostic as an LSP Diagnostic: the language server's own
--- when it came from one (exact range, code, source), else built from it.
local function to_lsp(d)
  local lsp = vim.tbl_get(d, 'user_data', 'lsp')
  if type(lsp) == 'table' and type(lsp.range) == 'table' and type(lsp.message) == 'string' then
    return lsp
  end
  return {
    range = {
      start = { line = d.lnum, character = d.col or 0 },
      ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col or 0 },
    },
    severity = d.severity,
    source = d.source,
    code = d.code,
    message = d.message,
  }
end

--- The errors and warnings of `bufnr` on the 0-based line `lnum` (not
--- hints or information), errors first.
function M.at_line(bufnr, lnum)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = lnum })) do
    if d.severity == SEVERITY.ERROR or d.severity == SEVERITY.WARN then
      table.insert(found, d)
    end
  end
  table.sort(found, function(a, b)
    return a.severity < b.severity
  end)
  return vim.tbl_map(to_lsp, found)
end

return M
