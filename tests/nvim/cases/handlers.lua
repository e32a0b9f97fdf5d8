-- Rein's handlers on what a server might send, through the real client:
-- malformed input is answered (applied = false, an LSP error, or ignored),
-- never a Lua error; edits the user allowed (needsConfirmation = false)
-- apply without a preview, exactly (an insertion at the end of the file
-- adds no blank line, UTF-8 columns, `changes` without versions, a created
-- file); a stale version is refused; rein/saveDocuments writes the buffer.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  local cart = H.open('cart.py')
  local client = H.client()
  local uri = vim.uri_from_bufnr(cart)
  local ctx = { client_id = client.id, method = 'workspace/applyEdit' }
  local apply = client.handlers['workspace/applyEdit']
  local function call(handler, params)
    local ok, result, err = pcall(handler, nil, params, ctx)
    H.check(ok, 'the handler threw: ' .. tostring(result))
    return result, err
  end
  local function allowed(document_changes)
    return {
      label = 'Rein: test',
      edit = {
        documentChanges = document_changes,
        changeAnnotations = { ['rein-t-1-1'] = { label = 'Rein: test', needsConfirmation = false } },
      },
    }
  end
  local function version()
    return vim.lsp.util.buf_versions[cart]
  end

  -- Malformed edits.
  local bad = {
    vim.NIL,
    { edit = 'nope' },
    { edit = { documentChanges = 'nope' } },
    {
      edit = { documentChanges = { { textDocument = { uri = uri, version = 'v1' }, edits = {} } } },
    },
    {
      edit = {
        documentChanges = {
          { textDocument = { uri = uri, version = 0 }, edits = { { newText = 'x' } } },
        },
      },
    },
    { edit = { documentChanges = { { kind = 'rename', oldUri = uri, newUri = uri .. '.bak' } } } },
    { edit = { changes = { ['http://example.com/x'] = {} } } },
    { edit = {} },
  }
  for i, params in ipairs(bad) do
    local result = call(apply, params)
    H.eq(type(result), 'table', 'answer to malformed edit ' .. i)
    H.eq(result.applied, false, 'malformed edit ' .. i .. ' applied')
    H.eq(type(result.failureReason), 'string', 'malformed edit ' .. i .. ' has a reason')
  end
  H.eq(require('rein.approval').pending(), 0, 'nothing waits for approval')

  -- An allowed insertion at the very end of the file.
  local original = H.text(cart)
  local lines = vim.api.nvim_buf_line_count(cart)
  local tail = '\n\ndef label():\n    return "café"\n'
  local result = call(
    apply,
    allowed({
      {
        textDocument = { uri = uri, version = version() },
        edits = {
          {
            range = {
              start = { line = lines, character = 0 },
              ['end'] = { line = lines, character = 0 },
            },
            newText = tail,
            annotationId = 'rein-t-1-1',
          },
        },
      },
    })
  )
  H.eq(result, { applied = true }, 'the allowed edit')
  H.eq(H.text(cart), original .. tail, 'the text after an insertion at the end')

  -- UTF-8 columns (the encoding Rein negotiates with Neovim): é is 2 bytes.
  H.eq(client.offset_encoding, 'utf-8', 'the negotiated encoding')
  local last = vim.api.nvim_buf_line_count(cart) - 1
  local line = vim.api.nvim_buf_get_lines(cart, last, last + 1, false)[1]
  local at = line:find('é', 1, true) - 1
  result = call(
    apply,
    allowed({
      {
        textDocument = { uri = uri, version = version() },
        edits = {
          {
            range = {
              start = { line = last, character = at },
              ['end'] = { line = last, character = at + 2 },
            },
            newText = 'e',
            annotationId = 'rein-t-1-1',
          },
        },
      },
    })
  )
  H.eq(result, { applied = true }, 'the UTF-8 edit')
  H.eq(
    vim.api.nvim_buf_get_lines(cart, last, last + 1, false)[1],
    '    return "cafe"',
    'the UTF-8 edit'
  )

  -- A stale version is refused, and nothing changes.
  local before = H.text(cart)
  result = call(
    apply,
    allowed({
      {
        textDocument = { uri = uri, version = version() - 1 },
        edits = {
          {
            range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
            newText = '# stale\n',
            annotationId = 'rein-t-1-1',
          },
        },
      },
    })
  )
  H.eq(result.applied, false, 'a stale edit')
  H.contains(result.failureReason, 'changed in Neovim while the edit waited', 'why')
  H.eq(H.text(cart), before, 'the text after a stale edit')

  -- `changes` (no versions) on a buffer that matches the disk.
  vim.api.nvim_buf_call(cart, function()
    vim.cmd('silent write')
  end)
  result = call(apply, {
    edit = {
      changes = {
        [uri] = {
          {
            range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
            newText = '# top\n',
            annotationId = 'rein-t-1-1',
          },
        },
      },
      changeAnnotations = { ['rein-t-1-1'] = { label = 'Rein: test', needsConfirmation = false } },
    },
  })
  H.eq(result, { applied = true }, 'an unversioned edit')
  H.eq(vim.api.nvim_buf_get_lines(cart, 0, 1, false)[1], '# top', 'the unversioned edit')

  -- A new file: created, opened, attached, holding exactly the content.
  local new_uri = vim.uri_from_fname(vim.fn.getcwd() .. '/pkg/new_module.py')
  result = call(
    apply,
    allowed({
      {
        kind = 'create',
        uri = new_uri,
        options = { overwrite = false, ignoreIfExists = false },
        annotationId = 'rein-t-1-1',
      },
      {
        textDocument = { uri = new_uri, version = vim.NIL },
        edits = {
          {
            range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
            newText = 'X = 1\n',
            annotationId = 'rein-t-1-1',
          },
        },
      },
    })
  )
  H.eq(result, { applied = true }, 'the created file')
  local new = H.buffer('pkg/new_module.py')
  H.check(new, 'the new file has a buffer')
  H.eq(H.text(new), 'X = 1\n', 'the new file text')
  H.check(client.attached_buffers[new], 'the new file is attached to Rein')
  H.eq(
    require('rein.approval').history[#require('rein.approval').history].how,
    'allowed',
    'no preview'
  )

  -- rein/saveDocuments.
  local save = client.handlers['rein/saveDocuments']
  local ok, res, err = pcall(save, nil, { nope = true }, ctx)
  H.check(
    ok and res == nil and err.code == vim.lsp.protocol.ErrorCodes.InvalidParams,
    'bad save params'
  )
  ok, res, err =
    pcall(save, nil, { uris = { vim.uri_from_fname(vim.fn.getcwd() .. '/missing.py') } }, ctx)
  H.check(
    ok and res == nil and err.code == vim.lsp.protocol.ErrorCodes.RequestFailed,
    'saving a file not open'
  )
  H.contains(err.message, 'missing.py: not open in Neovim', 'the save error')
  ok, res, err = pcall(save, nil, { uris = { uri, new_uri } }, ctx)
  H.check(ok and res == vim.NIL and err == nil, 'saving: ' .. vim.inspect({ res, err }))
  H.eq(H.disk('cart.py'), H.text(cart), 'cart.py saved')
  H.eq(H.disk('pkg/new_module.py'), 'X = 1\n', 'the new file saved')

  -- Notifications with garbage are ignored.
  for _, method in ipairs({ 'rein/taskStatus', 'rein/verification', 'window/showMessage' }) do
    for _, params in ipairs({ vim.NIL, {}, { taskId = 1, state = {} }, 'x' }) do
      local fine, e = pcall(client.handlers[method], nil, params, ctx)
      H.check(fine, method .. ' threw: ' .. tostring(e))
    end
  end
  H.eq(require('rein').status(), '', 'no task was made up')
end)
