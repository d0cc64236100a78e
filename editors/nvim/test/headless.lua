-- Headless test of the plugin against a real `quire lsp`:
--   QUIRE_LSP="bin/quire lsp" nvim --headless -u NONE -i NONE \
--     --cmd 'set rtp+=editors/nvim' -c 'luafile editors/nvim/test/headless.lua'
-- Exits 0 when every check passes, 1 otherwise.
local passed, failed = 0, 0

local function check(ok, what)
  if ok then
    passed = passed + 1
  else
    failed = failed + 1
    io.stderr:write('FAIL: ' .. what .. '\n')
  end
end

local function finish()
  io.stdout:write(string.format('nvim: %d passed, %d failed\n', passed, failed))
  if failed > 0 then
    vim.cmd('cquit 1')
  end
  -- Stop the client cleanly (shutdown, exit) before quitting.
  for _, c in pairs(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()) do
    if vim.fn.has('nvim-0.11') == 1 then
      c:stop()
    else
      c.stop()
    end
  end
  vim.wait(3000, function()
    return #(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()) == 0
  end, 50)
  vim.cmd('qall!')
end

local ok, err = pcall(function()
  vim.cmd('filetype on')
  local root = vim.fn.tempname()
  vim.fn.mkdir(root, 'p')
  local function write(name, text)
    local f = assert(io.open(root .. '/' .. name, 'w'))
    f:write(text)
    f:close()
  end
  write('AGENTS.md', '# Agents\nBe brief.\n')
  local line = 'Plain words about the soul, ação and 😀 emoji.\n' -- 46 code points
  local soul = {}
  local chars = 0
  while chars + 46 <= 25000 do
    soul[#soul + 1] = line
    chars = chars + 46
  end
  soul[#soul + 1] = string.rep('x', 25000 - chars)
  write('SOUL.md', table.concat(soul))

  local cmd = vim.split(os.getenv('QUIRE_LSP') or 'quire lsp', ' ', { trimempty = true })
  require('quire').setup({ cmd = cmd })
  check(vim.fn.exists(':QuirePreview') == 2, ':QuirePreview exists')

  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/SOUL.md'))
  local buf = vim.api.nvim_get_current_buf()
  check(vim.bo[buf].filetype == 'markdown', 'SOUL.md is markdown')

  local got = vim.wait(15000, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50)
  check(got, 'diagnostics arrive')
  local diags = vim.diagnostic.get(buf)
  check(#diags == 2, 'the faded cut and one warning for the over-budget SOUL.md, got ' .. #diags)
  local fade, warning
  for _, d in ipairs(diags) do
    if d.severity == vim.diagnostic.severity.HINT then
      fade = d
    elseif d.severity == vim.diagnostic.severity.WARN then
      warning = d
    end
  end
  check(fade ~= nil and fade.lnum > 0 and fade.end_lnum > fade.lnum, 'a hint covers the cut lines')
  check(warning ~= nil and warning.lnum == (fade and fade.lnum) and warning.end_lnum == warning.lnum,
    'one warning, on the first line of the cut')
  if warning then
    check(warning.message:find('25,000 chars', 1, true) ~= nil, 'the warning has the numbers: ' .. warning.message)
  end

  -- Only the warning is underlined, not every line of the cut.
  local client = require('quire').client(buf)
  local ns = client and vim.lsp.diagnostic.get_namespace(client.id)
  local dns = ns and vim.diagnostic.get_namespace(ns)
  local uns = dns and dns.user_data and dns.user_data.underline_ns
  if uns then
    local marks = vim.api.nvim_buf_get_extmarks(buf, uns, 0, -1, {})
    check(#marks >= 1 and #marks <= 2, 'only the warning is underlined, not the cut line by line: ' .. #marks .. ' underline marks')
  else
    check(false, 'the underline namespace of the diagnostics is found')
  end

  -- K shows the hover on every version (the plugin maps it before 0.10).
  if fade then
    vim.api.nvim_win_set_cursor(0, { fade.lnum + 2, 0 })
  end
  local function floats()
    local n = {}
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= '' then
        n[#n + 1] = w
      end
    end
    return n
  end
  vim.cmd('normal K')
  local hover_text
  vim.wait(10000, function()
    for _, w in ipairs(floats()) do
      local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)
      hover_text = table.concat(lines, '\n')
      if hover_text:find('Cut: lines', 1, true) then
        return true
      end
    end
    return false
  end, 50)
  check(hover_text ~= nil and hover_text:find('Cut: lines', 1, true) ~= nil, 'K shows the hover with the cut lines: ' .. tostring(hover_text))
  for _, w in ipairs(floats()) do
    vim.api.nvim_win_close(w, true)
  end

  vim.lsp.codelens.refresh()
  local lenses
  vim.wait(10000, function()
    lenses = vim.lsp.codelens.get(buf)
    return lenses and #lenses > 0
  end, 50)
  check(lenses and lenses[1] and lenses[1].command and lenses[1].command.title:find('^25,000 / 20,000 chars · %d+ %% of total · Preview prompt$') ~= nil,
    'the code lens on line 1 has the budget: ' .. vim.inspect(lenses and lenses[1] and lenses[1].command))

  vim.cmd('QuirePreview main dm')
  local preview
  vim.wait(10000, function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):find('^quire://') and vim.api.nvim_buf_line_count(b) > 1 then
        preview = b
        return true
      end
    end
    return false
  end, 50)
  check(preview ~= nil, 'the preview buffer opens')
  if preview then
    local text = table.concat(vim.api.nvim_buf_get_lines(preview, 0, -1, false), '\n')
    check(text:find('[...truncated, read SOUL.md for full content...]', 1, true) ~= nil, 'the preview shows the truncated SOUL.md')
    check(vim.bo[preview].buftype == 'nofile' and not vim.bo[preview].modifiable, 'the preview is a read-only scratch buffer')
  end

  -- Shorten SOUL.md in the buffer: the diagnostic is cleared.
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '# Soul', 'Short now.' })
  local cleared = vim.wait(10000, function()
    return #vim.diagnostic.get(buf) == 0
  end, 50)
  check(cleared, 'the diagnostic clears after the edit')
end)
if not ok then
  failed = failed + 1
  io.stderr:write('ERROR: ' .. tostring(err) .. '\n')
end
finish()
