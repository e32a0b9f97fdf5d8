-- :Rein install — builds the server from the sources this copy of the
-- plugin came with (`cargo build --release --locked -p rein` in the Rein
-- repository the plugin lives in), then uses it at once: this session's
-- `cmd` is set to the built binary and the server (re)started; the line
-- that keeps it is shown. Nothing is downloaded but the crates cargo
-- fetches; nothing is installed outside the repository's `target/`.

local M = {}

local function notify(msg, level)
  vim.notify('Rein: ' .. msg, level or vim.log.levels.INFO)
end

--- The Rein repository this plugin is part of: four folders above this
--- file (`editors/nvim/lua/rein/install.lua`), if it holds the server's
--- crate. `root` (the `install_root` setting) overrides it.
function M.source(root)
  if type(root) ~= 'string' or root == '' then
    local here = debug.getinfo(1, 'S').source:gsub('^@', '')
    root = vim.fn.fnamemodify(here, ':p:h:h:h:h:h')
  end
  root = vim.fs.normalize(root)
  if vim.fn.filereadable(root .. '/Cargo.toml') == 1 and vim.fn.filereadable(root .. '/server/rein/Cargo.toml') == 1 then
    return root
  end
  return nil,
    ('this copy of the plugin has no server sources next to it (%s); install the `rein` binary '
      .. 'from a release or with `cargo install --locked --path server/rein` in a clone of Rein, '
      .. 'then put it on PATH or set `cmd`'):format(root)
end

--- Builds and adopts the server; `done(binary)` once it runs (tests).
function M.run(done)
  local root, why = M.source(require('rein.config').get().install_root)
  if not root then
    notify(why, vim.log.levels.ERROR)
    return
  end
  if vim.fn.executable('cargo') ~= 1 then
    notify(
      'building the server needs Rust (`cargo`): install it from https://rustup.rs, then :Rein install again',
      vim.log.levels.ERROR
    )
    return
  end
  notify(('building the server in %s (cargo build --release; a first build takes minutes)…'):format(root))
  local argv = { 'cargo', 'build', '--release', '--locked', '-p', 'rein' }
  local ok, err = pcall(vim.system, argv, { cwd = root, text = true }, function(result)
    vim.schedule(function()
      if result.code ~= 0 then
        local tail = vim.split(vim.trim(result.stderr or ''), '\n', { plain = true })
        notify(
          ('the build failed (exit %d):\n%s'):format(result.code, table.concat(tail, '\n', math.max(1, #tail - 9))),
          vim.log.levels.ERROR
        )
        return
      end
      local binary = root .. '/target/release/rein'
      if vim.fn.executable(binary) ~= 1 then
        notify('the build said it succeeded, but there is no ' .. binary, vim.log.levels.ERROR)
        return
      end
      -- Re-resolves the client's configuration with it, then starts it.
      require('rein').setup({ cmd = { binary, 'lsp' } })
      require('rein.commands').restart()
      notify(
        ('built %s and started it. To keep it, put it on PATH or add to your config:\n'
          .. "  require('rein').setup({ cmd = { %q, 'lsp' } })"):format(binary, binary)
      )
      if done then
        done(binary)
      end
    end)
  end)
  if not ok then
    notify('could not run cargo: ' .. tostring(err), vim.log.levels.ERROR)
  end
end

return M
