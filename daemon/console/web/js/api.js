// The API client: the pages call the daemon's /v1 routes and the console's
// /ui/api routes with the session cookie, and send the CSRF token on every
// change.

let csrf = '';

/** setCSRF sets the token sent as X-CSRF-Token on every change. */
export function setCSRF(token) {
  csrf = token || '';
}

/** ApiError is an error answer: status, its stable code, the message for
 * people and the whole body (a stale write's carries the other version). */
export class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message || `the daemon answered ${status}`);
    this.status = status;
    this.code = code || '';
    this.body = body || {};
  }
}

/** request calls the API and resolves with {data, res}; an error answer
 * rejects with an ApiError. body is sent as JSON unless it is a string. */
export async function request(method, path, { body, headers = {} } = {}) {
  const h = { Accept: 'application/json', ...headers };
  if (method !== 'GET' && method !== 'HEAD') h['X-CSRF-Token'] = csrf;
  let payload;
  if (body !== undefined) {
    if (typeof body === 'string') payload = body;
    else {
      payload = JSON.stringify(body);
      h['Content-Type'] = 'application/json';
    }
  }
  let res;
  try {
    res = await fetch(path, { method, headers: h, body: payload, credentials: 'same-origin', cache: 'no-store' });
  } catch (err) {
    throw new ApiError(0, 'network', `The daemon did not answer (${err.message}). Is quire serve running?`);
  }
  const type = res.headers.get('Content-Type') || '';
  let data = null;
  if (res.status !== 204) data = type.includes('json') ? await res.json().catch(() => null) : await res.text();
  if (!res.ok) {
    const e = data && typeof data === 'object' ? data.error || {} : {};
    const message = e.message || (typeof data === 'string' && data.trim()) || `${res.status} ${res.statusText}`;
    if (res.status === 401) window.dispatchEvent(new CustomEvent('quire:signedout'));
    throw new ApiError(res.status, e.code, message, data && typeof data === 'object' ? data : {});
  }
  return { data, res };
}

export const get = async (path) => (await request('GET', path)).data;
export const post = async (path, body) => (await request('POST', path, { body: body ?? {} })).data;

/** agentPath is /v1/agents/{agent} followed by rest. */
export const agentPath = (agent, rest = '') => `/v1/agents/${encodeURIComponent(agent)}${rest}`;

/** filePath encodes a workspace path segment by segment. */
export const filePath = (p) => p.split('/').map(encodeURIComponent).join('/');

/** query makes ?a=b&… of the fields that are set. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}
