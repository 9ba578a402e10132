// Calls to the dashboard's own JSON endpoints (session cookie + CSRF header) and to the
// service's APIs with a key the user holds in this page's memory.

let csrfToken = null;
export const setCsrf = (t) => { csrfToken = t; };

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

/** A dashboard call. A 401 outside sign-in means the session is gone: the app is told. */
export async function dash(method, path, body) {
  const headers = { accept: 'application/json' };
  const init = { method, headers, credentials: 'same-origin' };
  if (method !== 'GET') {
    headers['content-type'] = 'application/json';
    if (csrfToken) headers['x-csrf-token'] = csrfToken;
    init.body = JSON.stringify(body ?? {});
  }
  const res = await fetch(`/dashboard/api/${path}`, init);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    if (res.status === 401 && path !== 'signin' && path !== 'signup') {
      window.dispatchEvent(new CustomEvent('session-lost', { detail: err.message }));
    }
    throw err;
  }
  return data;
}

/** A call to the service with an API key: {status, headers, data}. Never throws for HTTP errors. */
export async function service(key, method, path, body, extraHeaders = {}) {
  const headers = { accept: 'application/json', 'x-api-key': key, ...extraHeaders };
  const init = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  return { status: res.status, headers: res.headers, data };
}

/** The message of a failed service answer. */
export const messageOf = (r) => (r.data && typeof r.data === 'object' && r.data.message) || `HTTP ${r.status}`;
