// The live event stream: the console's server-sent events (GET
// /ui/api/events), read with fetch so one parser takes "data: {…}" lines
// and, from a daemon without that route, /v1/events' JSON lines. One
// connection serves every page; it reconnects after a failure.

const listeners = new Set();
let started = false;
let state = 'connecting';
const stateListeners = new Set();

/** onEvent calls fn with every event; it returns the unsubscribe function. */
export function onEvent(fn) {
  listeners.add(fn);
  start();
  return () => listeners.delete(fn);
}

/** onState calls fn with the stream's state: connecting, live or lost. */
export function onState(fn) {
  stateListeners.add(fn);
  fn(state);
  return () => stateListeners.delete(fn);
}

function setState(s) {
  state = s;
  for (const fn of stateListeners) fn(s);
}

function start() {
  if (started) return;
  started = true;
  connect(1000);
}

async function connect(backoff) {
  try {
    const init = { headers: { Accept: 'text/event-stream, application/x-ndjson' }, credentials: 'same-origin', cache: 'no-store' };
    let res = await fetch('/ui/api/events', init);
    if (res.status === 404) res = await fetch('/v1/events', init);
    if (!res.ok || !res.body) throw new Error(`status ${res.status}`);
    setState('live');
    backoff = 1000;
    await read(res.body);
  } catch {
    // fall through to reconnect
  }
  setState('lost');
  setTimeout(() => connect(Math.min(backoff * 2, 30000)), backoff);
}

async function read(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      dispatch(line);
    }
  }
}

function dispatch(line) {
  let payload = line;
  if (line.startsWith('data:')) payload = line.slice(5).trimStart();
  else if (line === '' || line.startsWith(':') || /^(event|id|retry):/.test(line)) return;
  let ev;
  try {
    ev = JSON.parse(payload);
  } catch {
    return;
  }
  for (const fn of listeners) fn(ev);
}
