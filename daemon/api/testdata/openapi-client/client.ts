// Drives every route of Quire's local API with a client generated from
// the openapi.json a running daemon serves (openapi-typescript's types,
// openapi-fetch's requests). It compiles only if the generated types
// have what a client needs (tsc --strict), and each call checks at run
// time that the daemon answers what the types promise. run.mjs starts
// the daemon and calls exercise.
import createClient from "openapi-fetch";
import type { components, paths } from "./gen/api";

type ErrorCode = components["schemas"]["ErrorCode"];

export async function exercise(baseUrl: string, token: string, hookSecret: string,
  check: (name: string, fn: () => Promise<void>) => Promise<void>): Promise<void> {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
  const agent = { agent: "bot" };

  function ok(cond: unknown, what: string): asserts cond {
    if (!cond) throw new Error(what);
  }
  function code(error: unknown, want: ErrorCode): void {
    const e = error as components["schemas"]["ErrorBody"] | undefined;
    ok(e?.error?.code === want, `want error ${want}, got ${JSON.stringify(error)}`);
  }

  await check("getStatus", async () => {
    const { data, error } = await api.GET("/v1/status");
    ok(data, JSON.stringify(error));
    ok(data.agents.some((a) => a.name === "bot" && a.deployed_commit.length > 0), JSON.stringify(data));
  });
  await check("listAgents", async () => {
    const { data } = await api.GET("/v1/agents");
    ok(data?.agents[0]?.type === "predefined", JSON.stringify(data));
  });
  await check("assemblePrompt", async () => {
    const { data, error } = await api.POST("/v1/agents/{agent}/prompt", {
      params: { path: agent },
      body: { user: "ann", channel: "dm", tools: [{ name: "calendar", description: "Books rooms." }] },
    });
    ok(data, JSON.stringify(error));
    ok(data.prompt.includes("MARKER-ONE"), "the prompt lacks SOUL.md");
    const soul = data.report.files.find((f) => f.name === "SOUL.md");
    ok(soul?.status === "full" && data.report.budget.per_file > 0, JSON.stringify(data.report));
  });
  await check("assemblePrompt refuses an unknown field", async () => {
    // @ts-expect-error: the generated PromptRequest has no field "sesion" (a typo tsc catches)
    const typo: components["schemas"]["PromptRequest"] = { sesion: "main" };
    const { error, response } = await api.POST("/v1/agents/{agent}/prompt", { params: { path: agent }, body: typo });
    ok(response.status === 400, `status ${response.status}`);
    code(error, "bad_request");
  });
  await check("searchMemory", async () => {
    for (let i = 0; i < 50; i++) {
      const { data, error } = await api.POST("/v1/agents/{agent}/memory/search", { params: { path: agent }, body: { query: "wifi password", limit: 3 } });
      ok(data, JSON.stringify(error));
      if (data.hits[0]?.path === "MEMORY.md") return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("no hit in MEMORY.md");
  });
  await check("planMemoryFlush", async () => {
    const { data } = await api.POST("/v1/agents/{agent}/memory/flush-plan", {
      params: { path: agent }, body: { total_tokens: 120000, context_window: 128000, cycle: 1 },
    });
    ok(data?.flush === true && data.threshold_tokens === 104000 && data.target?.startsWith("memory/"), JSON.stringify(data));
  });
  await check("readFile and writeFile (If-Match, ETag, a path with a slash)", async () => {
    const read = await api.GET("/v1/agents/{agent}/files/{path}", { params: { path: { agent: "bot", path: "MEMORY.md" } } });
    ok(read.data, JSON.stringify(read.error));
    ok(read.response.headers.get("ETag") === read.data.etag, "ETag header and body differ");
    const put = await api.PUT("/v1/agents/{agent}/files/{path}", {
      params: { path: { agent: "bot", path: "MEMORY.md" }, header: { "If-Match": read.data.etag } },
      body: { content: read.data.content + "\nThe boiler is in the cellar.\n" },
    });
    ok(put.data?.etag && put.data.etag !== read.data.etag, JSON.stringify(put.error));
    const stale = await api.PUT("/v1/agents/{agent}/files/{path}", {
      params: { path: { agent: "bot", path: "MEMORY.md" }, header: { "If-Match": read.data.etag } },
      body: { content: "lost update" },
    });
    ok(stale.response.status === 409, `status ${stale.response.status}`);
    code(stale.error, "stale");
    const created = await api.PUT("/v1/agents/{agent}/files/{path}", {
      params: { path: { agent: "bot", path: "memory/notes.md" }, header: { "If-Match": "*" } },
      body: { content: "# Notes\n" },
    });
    ok(created.data?.path === "memory/notes.md", JSON.stringify(created));
    const again = await api.GET("/v1/agents/{agent}/files/{path}", { params: { path: { agent: "bot", path: "memory/notes.md" } } });
    ok(again.data?.content === "# Notes\n", JSON.stringify(again));
  });
  await check("listFiles, deleteFile, report, and a body that is not JSON or Markdown", async () => {
    const list = await api.GET("/v1/agents/{agent}/files", { params: { path: agent } });
    ok(list.data?.files.some((f) => f.path === "MEMORY.md" && f.kind === "memory" && f.size > 0 && f.etag.length > 0), JSON.stringify(list));
    const seeds = await api.GET("/v1/agents/{agent}/files", { params: { path: agent, query: { user: "newcomer" } } });
    ok(seeds.data?.files.every((f) => f.seed === true) && seeds.data.files.length === 2, JSON.stringify(seeds));
    const notes = await api.GET("/v1/agents/{agent}/files/{path}", { params: { path: { agent: "bot", path: "memory/notes.md" } } });
    ok(notes.data, JSON.stringify(notes.error));
    const del = await api.DELETE("/v1/agents/{agent}/files/{path}", {
      params: { path: { agent: "bot", path: "memory/notes.md" }, header: { "If-Match": notes.data.etag } },
    });
    ok(del.data?.deleted === true && del.data.budget?.status === "not_in_prompt", JSON.stringify(del));
    const report = await api.GET("/v1/agents/{agent}/report", { params: { path: agent, query: { user: "ann", mode: "task" } } });
    ok(report.data?.mode === "task" && report.data.files.some((f) => f.name === "SOUL.md"), JSON.stringify(report));
    const form = await fetch(`${baseUrl}/v1/agents/bot/files/MEMORY.md`, {
      method: "PUT", body: '{"content":"x"}',
      headers: { Authorization: `Bearer ${token}`, "If-Match": "*", "Content-Type": "application/x-www-form-urlencoded" },
    });
    ok(form.status === 415, `status ${form.status}`);
  });
  await check("searchSkills, listSkills, getSkill", async () => {
    const found = await api.POST("/v1/agents/{agent}/skills/search", { params: { path: agent }, body: { query: "greet a guest" } });
    ok(found.data?.skills[0]?.name === "greeting" && (found.data.skills[0].score ?? 0) > 0, JSON.stringify(found));
    const list = await api.GET("/v1/agents/{agent}/skills", { params: { path: agent, query: { user: "ann" } } });
    ok(list.data?.skills.some((s) => s.name === "greeting"), JSON.stringify(list));
    const one = await api.GET("/v1/agents/{agent}/skills/{name}", { params: { path: { agent: "bot", name: "greeting" } } });
    ok(one.data && !one.data.body.includes("{baseDir}") && one.data.tier === "workspace", JSON.stringify(one));
    const none = await api.GET("/v1/agents/{agent}/skills/{name}", { params: { path: { agent: "bot", name: "nope" } } });
    ok(none.response.status === 404, `status ${none.response.status}`);
    code(none.error, "unknown_skill");
  });
  await check("streamEvents and appendMemory", async () => {
    const ctl = new AbortController();
    const stream = await api.GET("/v1/events", { parseAs: "stream", signal: ctl.signal });
    ok(stream.response.ok && stream.data, `status ${stream.response.status}`);
    const reader = stream.data.pipeThrough(new TextDecoderStream()).getReader();
    const appended = await api.POST("/v1/agents/{agent}/memory/append", { params: { path: agent }, body: { user: "ann", text: "Prefers oat milk." } });
    ok(appended.data?.path.startsWith("users/ann/memory/"), JSON.stringify(appended));
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      ok(!done, "the stream ended before the write event");
      buf += value;
      const lines = buf.split("\n");
      buf = lines.pop() ?? "";
      const events = lines.map((l) => JSON.parse(l) as components["schemas"]["Event"]);
      if (events.some((e) => e.type === "write" && e.agent === "bot")) break;
    }
    ctl.abort();
  });
  await check("summonAgent and consolidateMemory without a model", async () => {
    const summoned = await api.POST("/v1/agents/{agent}/summon", { params: { path: { agent: "ferris" } }, body: { description: "a Rust reviewer" } });
    ok(summoned.response.status === 501, `status ${summoned.response.status}`);
    code(summoned.error, "no_model");
    const consolidated = await api.POST("/v1/agents/{agent}/consolidate", { params: { path: agent }, body: { days: 7 } });
    ok(consolidated.response.status === 501, `status ${consolidated.response.status}`);
    code(consolidated.error, "no_model");
  });
  await check("getMetrics", async () => {
    const { data } = await api.GET("/metrics", { parseAs: "text" });
    ok(data?.includes("quire_api_request_seconds"), String(data).slice(0, 200));
  });
  await check("getOpenAPI without a token", async () => {
    const bare = createClient<paths>({ baseUrl });
    const { data, response } = await bare.GET("/v1/openapi.json");
    ok(response.status === 200 && (data as { openapi?: string } | undefined)?.openapi === "3.1.0", `status ${response.status}`);
    const status = await bare.GET("/v1/status");
    code(status.error, "unauthorized");
  });
  await check("receiveGitWebhook (a signed ping)", async () => {
    const body = { zen: "Keep it logically awesome." };
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(hookSecret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(JSON.stringify(body))));
    const hex = Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
    const { data, error } = await api.POST("/v1/hooks/git", {
      params: { header: { "X-GitHub-Event": "ping", "X-Hub-Signature-256": `sha256=${hex}` } },
      body,
    });
    ok(data?.message.startsWith("pong"), JSON.stringify(error));
  });
}
