-- :Rein install builds the server from the plugin's sources and uses it at
-- once (the server restarted with the built binary). Here `cargo` is a
-- stand-in that "builds" by linking the binary under test, and the sources
-- are a stand-in repository: what is checked is the plugin's part. Without
-- sources it says what to do instead, and runs nothing.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

local function write(path, text, mode)
  vim.fn.writefile(vim.split(text, '\n', { plain = true }), path)
  if mode then
    vim.fn.setfperm(path, mode)
  end
end

H.run(function()
  local dir = vim.fn.tempname()
  local src = dir .. '/rein'
  vim.fn.mkdir(dir .. '/bin', 'p')
  vim.fn.mkdir(src .. '/server/rein', 'p')
  write(src .. '/Cargo.toml', '[workspace]')
  write(src .. '/server/rein/Cargo.toml', '[package]\nname = "rein"')
  write(
    dir .. '/bin/cargo',
    table.concat({
      '#!/bin/sh',
      '[ "$*" = "build --release --locked -p rein" ] || { echo "unexpected cargo $*" >&2; exit 2; }',
      'mkdir -p target/release && ln -sf "$REIN_NVIM_BIN" target/release/rein',
    }, '\n'),
    'rwxr-xr-x'
  )
  vim.env.PATH = dir .. '/bin:' .. vim.env.PATH

  -- No sources: said, nothing run.
  require('rein').setup({ install_root = dir .. '/nothing-here' })
  vim.cmd('Rein install')
  H.wait('the reason it cannot build', function()
    return H.notified('has no server sources next to it')
  end)
  H.check(vim.fn.isdirectory(dir .. '/nothing-here/target') == 0, 'nothing built')

  require('rein').setup({ install_root = src })
  H.open('tests/test_cart.py')
  local built
  require('rein.install').run(function(binary)
    built = binary
  end)
  H.wait('the server built and started', function()
    return built ~= nil
  end)
  H.eq(built, src .. '/target/release/rein', 'the built binary')
  H.eq(require('rein.config').cmd()[1], vim.fn.exepath(built), 'the session uses it')
  H.wait('a server started from it', function()
    local client = vim.lsp.get_clients({ name = 'rein' })[1]
    return client ~= nil and not client:is_stopped() and client.config.cmd[1] == vim.fn.exepath(built)
  end)
  H.check(H.notified("require('rein').setup({ cmd = {"), 'the line that keeps it is shown')
end)
