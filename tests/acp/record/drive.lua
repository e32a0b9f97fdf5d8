-- Drives CodeCompanion.nvim's ACP chat against `rein acp` in headless
-- Neovim, to record what CodeCompanion sends (see record.py).
--   REC_LOG=... REC_PROMPT=... REC_PERMISSION=allow_once|reject_once REC_CANCEL=1 \
--     nvim --headless --clean -l drive.lua
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
vim.opt.rtp:prepend(os.getenv("CC_DIR"))
vim.opt.rtp:prepend(os.getenv("PLENARY_DIR"))
local done, status = false, nil
local function say(...) io.stderr:write(string.format(...) .. "\n") end

require("codecompanion").setup({
  adapters = {
    acp = {
      rein = function()
        return require("codecompanion.adapters").extend("claude_code", {
          name = "rein",
          formatted_name = "Rein",
          commands = {
            default = { "python3", here .. "/record.py", os.getenv("REC_LOG"), "--", os.getenv("REIN"), "acp" },
          },
          env = {},
          handlers = { auth = function() return true end },
        })
      end,
    },
  },
  interactions = { chat = { adapter = "rein" } },
  opts = { log_level = "DEBUG" },
})

-- Answer permission requests as CodeCompanion's own UI would (its keymaps
-- call request.respond with the option's id): the wire is CodeCompanion's.
local perm = require("codecompanion.interactions.chat.acp.request_permission")
perm.confirm = function(chat, request)
  local want = os.getenv("REC_PERMISSION") or "allow_once"
  say("permission asked: %s", vim.inspect(request.tool_call and request.tool_call.title))
  if os.getenv("REC_CANCEL") == "1" then
    vim.defer_fn(function()
      say("stopping the chat")
      chat:stop()
    end, 300)
    for _, opt in ipairs(request.options or {}) do
      if opt.kind == want then return request.respond(opt.optionId, false) end
    end
  end
  for _, opt in ipairs(request.options or {}) do
    if opt.kind == want then
      return request.respond(opt.optionId, false)
    end
  end
  request.respond(nil, true)
end

vim.cmd("CodeCompanionChat")
local chat = require("codecompanion").last_chat()
assert(chat, "no chat")
-- The user types at once, as the chat opens (its connection is still being set up).
chat:add_buf_message({ role = "user", content = os.getenv("REC_PROMPT") })
chat:submit()

local ok = vim.wait(tonumber(os.getenv("REC_WAIT_MS") or "90000"), function()
  return chat.status ~= nil and chat.status ~= "" and (chat.current_request == nil)
end, 200)
say("finished: %s status=%s", tostring(ok), tostring(chat.status))
local lines = vim.api.nvim_buf_get_lines(chat.bufnr, 0, -1, false)
io.stderr:write(table.concat(lines, "\n") .. "\n")
vim.cmd("qa!")
