-- Quire for Neovim: registers `quire lsp` for the Markdown and agent.yaml
-- files of Quire agent workspaces and adds :QuirePreview. Works with the
-- built-in LSP client of Neovim 0.7 (vim.lsp.start_client), 0.8–0.10
-- (vim.lsp.start) and 0.11+ (vim.lsp.config / vim.lsp.enable).
local M = {}

local defaults = {
  -- The server command.
  cmd = { 'quire', 'lsp' },
  -- Filetypes the server attaches to (agent.yaml is the only YAML file).
  filetypes = { 'markdown', 'yaml' },
  -- Debounce of the preview refresh while typing, in milliseconds.
  refresh_ms = 300,
  -- Show the budget code lens on line 1 (refreshed on enter, save and
  -- leaving insert mode).
  codelens = true,
  -- The key that shows the hover (budget figures, what is cut) in buffers
  -- the server attaches to. Neovim maps K itself from 0.10 on; before, the
  -- plugin maps this key unless the buffer already maps it. false: no map.
  hover_key = 'K',
}

M.options = vim.deepcopy(defaults)

local CONTEXT_FILES = {
  ['AGENTS.md'] = true, ['SOUL.md'] = true, ['TOOLS.md'] = true, ['IDENTITY.md'] = true,
  ['USER.md'] = true, ['USER_PREDEFINED.md'] = true, ['HEARTBEAT.md'] = true,
  ['BOOTSTRAP.md'] = true, ['MEMORY.md'] = true, ['memory.md'] = true,
}

local function basename(path)
  return path:match('([^/]+)$') or path
end

local function dirname(path)
  return path:match('^(.*)/[^/]*$') or '/'
end

local function exists(path)
  return vim.loop.fs_stat(path) ~= nil
end

--- The workspace root for a file, or nil when the file is not part of a
--- Quire workspace: the nearest directory with agent.yaml, else the nearest
--- git repository or directory with AGENTS.md or SOUL.md for a file that
--- Quire reads (context files, SKILL.md, memory).
function M.root_dir(path)
  if path == nil or path == '' then
    return nil
  end
  local name = basename(path)
  local dir = dirname(path)
  local d = dir
  while d and d ~= '' do
    if exists(d .. '/agent.yaml') then
      return d
    end
    local parent = dirname(d)
    if parent == d then
      break
    end
    d = parent
  end
  local quire_file = CONTEXT_FILES[name] or name == 'SKILL.md' or path:match('/memory/[^/]+%.md$')
  if not quire_file then
    return nil
  end
  d = dir
  local marked
  while d and d ~= '' do
    if exists(d .. '/.git') then
      return d
    end
    if not marked and (exists(d .. '/AGENTS.md') or exists(d .. '/SOUL.md')) and not d:match('/users/[^/]+$') then
      marked = d
    end
    local parent = dirname(d)
    if parent == d then
      break
    end
    d = parent
  end
  return marked or dir
end

local function attachable(bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].filetype == 'yaml' and basename(path) ~= 'agent.yaml' then
    return nil
  end
  return M.root_dir(path)
end

--- The Quire client attached to bufnr (or any Quire client), if there is one.
function M.client(bufnr)
  local clients
  if vim.lsp.get_clients then
    clients = vim.lsp.get_clients({ bufnr = bufnr, name = 'quire' })
  elseif bufnr then
    clients = vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
  else
    clients = vim.lsp.get_active_clients()
  end
  for _, c in pairs(clients) do
    if c.name == 'quire' then
      return c
    end
  end
  return nil
end

local preview_bufs = {} -- preview buffer → its arguments

local function render(buf, result)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local lines = vim.split(result.prompt or '', '\n', { plain = true })
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

-- Client methods take self from Neovim 0.11 on; dot calls are deprecated.
local method_calls = vim.fn.has('nvim-0.11') == 1

local function request(client, method, params, handler)
  if method_calls then
    return client:request(method, params, handler)
  end
  return client.request(method, params, handler)
end

local function request_preview(client, args, on_result)
  request(client, 'workspace/executeCommand', { command = 'quire.previewPrompt', arguments = { args } }, function(err, result)
    if err then
      vim.notify('Quire: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    on_result(result)
  end)
end

--- Opens (or refreshes) the scratch buffer showing the prompt for args
--- {agent, user, session, channel, uri}.
function M.open_preview(args, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr) or M.client(nil)
  if not client then
    vim.notify('Quire: the language server is not running for this buffer', vim.log.levels.WARN)
    return
  end
  request_preview(client, args, function(result)
    local report = result.report or {}
    local name = string.format('quire://%s/%s/%s%s', report.agent or 'agent', report.session or args.session or 'main',
      report.channel or args.channel or 'dm', report.user and ('/' .. report.user) or '')
    local buf = vim.fn.bufnr(name)
    if buf == -1 then
      buf = vim.api.nvim_create_buf(false, true)
      vim.api.nvim_buf_set_name(buf, name)
      vim.bo[buf].buftype = 'nofile'
      vim.bo[buf].bufhidden = 'hide'
      vim.bo[buf].swapfile = false
      vim.bo[buf].filetype = 'markdown'
    end
    preview_bufs[buf] = args
    render(buf, result)
    if vim.fn.bufwinid(buf) == -1 then
      vim.cmd('vsplit')
      vim.api.nvim_win_set_buf(0, buf)
    end
    vim.b[buf].quire_report = report
  end)
end

local refresh_timer
local function refresh_previews(client)
  if refresh_timer then
    refresh_timer:stop()
  end
  refresh_timer = vim.defer_fn(function()
    for buf, args in pairs(preview_bufs) do
      if vim.api.nvim_buf_is_valid(buf) then
        request_preview(client, args, function(result)
          render(buf, result)
        end)
      else
        preview_bufs[buf] = nil
      end
    end
  end, M.options.refresh_ms)
end

--- :QuirePreview [session] [channel] [user]
function M.preview_command(opts)
  local fargs = opts.fargs or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local args = {
    session = fargs[1] or 'main',
    channel = fargs[2] or 'dm',
    user = fargs[3],
    uri = vim.uri_from_bufnr(bufnr),
  }
  M.open_preview(args, bufnr)
end

--- Maps the hover key in bufnr on Neovim before 0.10, which does not map
--- K to vim.lsp.buf.hover itself; a mapping the buffer already has wins.
local function map_hover(bufnr)
  local key = M.options.hover_key
  if not key or vim.fn.has('nvim-0.10') == 1 then
    return
  end
  local existing = vim.fn.maparg(key, 'n', false, true)
  if existing and existing.buffer == 1 then
    return
  end
  vim.keymap.set('n', key, vim.lsp.buf.hover, { buffer = bufnr, desc = 'Quire: hover (budget figures, what is cut)' })
end

--- The text the prompt does not get is one hint over the cut (tagged
--- unnecessary: Neovim 0.9+ fades it) and one warning on its first line.
--- Only warnings and errors are underlined, so the cut is not underlined
--- line by line.
local function configure_diagnostics(client)
  local ok, ns = pcall(vim.lsp.diagnostic.get_namespace, client.id)
  if ok and ns then
    vim.diagnostic.config({ underline = { severity = { min = vim.diagnostic.severity.WARN } } }, ns)
  end
end

local function on_attach(client, bufnr)
  configure_diagnostics(client)
  map_hover(bufnr)
  local group = vim.api.nvim_create_augroup('quire_preview_' .. bufnr, { clear = true })
  if M.options.codelens and vim.lsp.codelens then
    vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
      group = group,
      buffer = bufnr,
      callback = function()
        pcall(vim.lsp.codelens.refresh)
      end,
    })
    pcall(vim.lsp.codelens.refresh)
  end
  vim.api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      if next(preview_bufs) then
        refresh_previews(client)
      end
    end,
  })
end

local function config_for(root)
  return {
    name = 'quire',
    cmd = M.options.cmd,
    root_dir = root,
    on_attach = on_attach,
    -- Neovim on Linux has no file watching; the server watches the disk.
  }
end

local started = {} -- 0.7: root → client id

local function start(bufnr)
  local root = attachable(bufnr)
  if not root then
    return
  end
  if vim.lsp.start then -- 0.8+
    vim.lsp.start(config_for(root), { bufnr = bufnr })
    return
  end
  local id = started[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    local cfg = config_for(root)
    cfg.workspace_folders = { { uri = vim.uri_from_fname(root), name = root } }
    id = vim.lsp.start_client(cfg)
    started[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

--- setup registers the server. opts: cmd, filetypes, refresh_ms.
function M.setup(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})

  -- A code lens "Preview prompt" runs quire.previewPrompt: show its answer.
  vim.lsp.commands['quire.previewPrompt'] = function(command, ctx)
    local args = (command.arguments or {})[1] or {}
    M.open_preview(args, ctx and ctx.bufnr)
  end

  if vim.api.nvim_create_user_command then
    vim.api.nvim_create_user_command('QuirePreview', M.preview_command, {
      nargs = '*',
      complete = function(_, line)
        local n = #vim.split(line, '%s+') - 1
        if n <= 1 then
          return { 'main', 'subagent', 'cron' }
        elseif n == 2 then
          return { 'dm', 'group' }
        end
        return {}
      end,
      desc = 'Preview the system prompt Quire assembles: [session] [channel] [user]',
    })
  end

  if vim.lsp.config and vim.lsp.enable then -- 0.11+
    vim.lsp.config('quire', {
      cmd = M.options.cmd,
      filetypes = M.options.filetypes,
      on_attach = on_attach,
      root_dir = function(bufnr, on_dir)
        local root = attachable(bufnr)
        if root then
          on_dir(root)
        end
      end,
    })
    vim.lsp.enable('quire')
    return
  end

  local group = vim.api.nvim_create_augroup('quire_lsp', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.options.filetypes,
    callback = function(ev)
      start(ev.buf)
    end,
  })
  -- Buffers already open when setup runs.
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(M.options.filetypes, vim.bo[buf].filetype) then
      start(buf)
    end
  end
end

return M
