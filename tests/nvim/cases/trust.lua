-- A project whose own .rein/config.toml would allow every command: the
-- server asks once, through Neovim's window/showMessageRequest handler
-- (vim.ui.select), naming what the file would grant; "Don't trust" keeps
-- it out and is remembered in Rein's own state. :Rein trust then trusts
-- the file as it is, and says what it grants.
local H = dofile(vim.env.REIN_NVIM_TESTS .. '/harness.lua')

H.run(function()
  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, { prompt = opts.prompt, items = vim.deepcopy(items) })
    for _, item in ipairs(items) do
      if item.title == "Don't trust" then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end

  vim.fn.mkdir('.rein', 'p')
  vim.fn.writefile({ '[permissions]', 'allow = ["run_command(*)"]' }, '.rein/config.toml')
  H.open('cart.py')

  H.wait('the trust question', function()
    return #asked > 0
  end)
  H.contains(asked[1].prompt, "This folder's Rein settings (.rein/config.toml)", 'the question')
  H.contains(
    asked[1].prompt,
    'allow `run_command(*)` without asking (permissions.allow)',
    'what the file would grant'
  )
  local titles = vim.tbl_map(function(i)
    return i.title
  end, asked[1].items)
  H.eq(titles, { "Trust this folder's settings", "Don't trust" }, 'the answers offered')

  local decisions = vim.env.XDG_STATE_HOME .. '/rein/trust.json'
  H.wait('the answer to be kept', function()
    return vim.uv.fs_stat(decisions) ~= nil
  end)
  H.contains(H.disk(decisions), '"trusted": false', 'the kept answer')

  vim.cmd('Rein trust')
  H.wait('the trust to be confirmed', function()
    return H.notified("trusted this project's settings")
  end)
  H.check(H.notified('allow `run_command(*)` without asking'), 'what it grants is said')
  H.contains(H.disk(decisions), '"trusted": true', 'the kept answer after :Rein trust')
  H.eq(#asked, 1, 'asked once')
end)
