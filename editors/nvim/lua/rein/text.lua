-- Text from the model, the repository or a test runner, made fit to show:
-- inert (no character that a terminal or Neovim would not show as itself)
-- and plain (no Markdown backticks where nothing renders Markdown).

local M = {}

--- Whether code point `c` disguises text: a control character (C0, DEL,
--- C1), or an invisible Unicode format character that can hide or reorder
--- what a line shows (bidi overrides and isolates, zero-width characters,
--- line separators, the BOM, tags…). The same set as the server's
--- `rein_core::inert::disguises`.
local function disguises(c)
  return c < 0x20
    or (c >= 0x7f and c <= 0x9f)
    or c == 0xad
    or c == 0x34f
    or c == 0x61c
    or c == 0x115f
    or c == 0x1160
    or c == 0x3164
    or c == 0xffa0
    or c == 0x180e
    or (c >= 0x200b and c <= 0x200f)
    or (c >= 0x2028 and c <= 0x202e)
    or (c >= 0x2060 and c <= 0x2064)
    or (c >= 0x2066 and c <= 0x206f)
    or c == 0xfeff
    or (c >= 0xfff9 and c <= 0xfffb)
    or (c >= 0x1bca0 and c <= 0x1bca3)
    or (c >= 0x1d173 and c <= 0x1d17a)
    or (c >= 0xe0000 and c <= 0xe007f)
end

local NAMED = { [0x0a] = '\\n', [0x0d] = '\\r', [0x09] = '\\t' }

local function escape(c)
  if NAMED[c] then
    return NAMED[c]
  end
  if c < 0x80 then
    return ('\\x%02x'):format(c)
  end
  return ('\\u{%x}'):format(c)
end

--- The next UTF-8 character of `s` at byte `i`: its code point and length,
--- or nil for a byte that starts no valid sequence.
local function decode(s, i)
  local b = s:byte(i)
  local len, min, c
  if b < 0x80 then
    return b, 1
  elseif b >= 0xc2 and b <= 0xdf then
    len, min, c = 2, 0x80, b - 0xc0
  elseif b >= 0xe0 and b <= 0xef then
    len, min, c = 3, 0x800, b - 0xe0
  elseif b >= 0xf0 and b <= 0xf4 then
    len, min, c = 4, 0x10000, b - 0xf0
  else
    return nil
  end
  for k = 1, len - 1 do
    local n = s:byte(i + k)
    if not n or n < 0x80 or n > 0xbf then
      return nil
    end
    c = c * 64 + (n - 0x80)
  end
  if c < min or c > 0x10ffff or (c >= 0xd800 and c <= 0xdfff) then
    return nil
  end
  return c, len
end

--- `s` as one line: every disguising character (line breaks and tabs too)
--- written as a visible escape (`\x1b`, `\n`, `\u{202e}`), and a byte that
--- is not UTF-8 as `\xNN`. Backslashes stay as they are, as the server's.
function M.inert(s)
  s = tostring(s or '')
  -- The common case: printable ASCII only.
  if not s:find('[^\32-\126]') then
    return s
  end
  local out = {}
  local i = 1
  while i <= #s do
    local c, len = decode(s, i)
    if not c then
      table.insert(out, ('\\x%02x'):format(s:byte(i)))
      i = i + 1
    else
      table.insert(out, disguises(c) and escape(c) or s:sub(i, i + len - 1))
      i = i + len
    end
  end
  return table.concat(out)
end

--- `s` without Markdown code-span backticks: each matched pair (or run,
--- as in ``x``) around text goes, a lone backtick stays.
function M.plain(s)
  if type(s) ~= 'string' then
    return s
  end
  return (s:gsub('(`+)([^`\n]+)%1', '%2'))
end

--- A paragraph of untrusted text as lines of at most `width` display
--- cells: its own line breaks kept, everything else inert, words wrapped
--- (a word longer than the width is cut).
function M.wrap(s, width)
  width = math.max(10, width)
  local lines = {}
  local text = tostring(s or ''):gsub('\r\n', '\n')
  local paragraphs = vim.split(text, '\n', { plain = true })
  for _, paragraph in ipairs(paragraphs) do
    local line = ''
    for word in M.inert(paragraph):gmatch('%S+') do
      while vim.fn.strdisplaywidth(word) > width do
        if line ~= '' then
          table.insert(lines, line)
          line = ''
        end
        local n = vim.fn.strchars(word)
        local cut = n
        while cut > 1 and vim.fn.strdisplaywidth(vim.fn.strcharpart(word, 0, cut)) > width do
          cut = cut - 1
        end
        table.insert(lines, vim.fn.strcharpart(word, 0, cut))
        word = vim.fn.strcharpart(word, cut)
      end
      if word ~= '' then
        if line == '' then
          line = word
        elseif vim.fn.strdisplaywidth(line) + 1 + vim.fn.strdisplaywidth(word) <= width then
          line = line .. ' ' .. word
        else
          table.insert(lines, line)
          line = word
        end
      end
    end
    if line ~= '' then
      table.insert(lines, line)
    end
  end
  return lines
end

return M
