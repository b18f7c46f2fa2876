// api.js: the console's only way to the agent, same-origin calls to its
// API with the token kept for this browser tab (sessionStorage) only.

const KEY = 'grove.token';

/** AuthError: the agent wants a token, or refused the one sent (401). */
export class AuthError extends Error {}

/** APIError: the agent answered an error; message is its own sentence. */
export class APIError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

export const token = {
  get: () => sessionStorage.getItem(KEY) || '',
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

function headers(extra = {}) {
  const h = { Accept: 'application/json', ...extra };
  const t = token.get();
  if (t) h['X-Auth-Token'] = t;
  return h;
}

/** qs renders query parameters, leaving out empty ones. */
export function qs(params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

function errorText(data, fallback) {
  if (data && data.error && data.error.message) return data.error.message;
  if (data && data.explanation) return data.explanation;
  return fallback;
}

/**
 * call sends one request. It returns the answer's body and the id of the
 * action the request queued, if any (the Location header, or the body's
 * "action" as Senlin's cluster and node actions answer).
 */
export async function call(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const r = await fetch(path, init);
  const text = await r.text();
  let data = {};
  try { data = text ? JSON.parse(text) : {}; } catch { data = { explanation: text }; }
  if (r.status === 401) throw new AuthError(errorText(data, 'A token is required.'));
  if (!r.ok) throw new APIError(r.status, errorText(data, `${r.status} ${r.statusText}`));
  const m = (r.headers.get('Location') || '').match(/\/v1\/actions\/([^/?#]+)/);
  let action = m ? m[1] : '';
  if (!action && typeof data.action === 'string') action = data.action;
  return { data, action };
}

/** get reads a resource or list. */
export async function get(path, params) {
  return (await call('GET', path + qs(params))).data;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * follow reads the agent's event stream (GET /v1/events?follow=true) until
 * signal aborts, calling onEvent with each event and onState with
 * "connecting", "live", "reconnecting" or "unauthorized".
 *
 * EventSource cannot send the token header, so the stream is read with
 * fetch and its server-sent-events framing (event:/data: lines, blank line
 * between events, ":" comments) parsed here: a few lines, where a library
 * would need a build step or a download.
 */
export async function follow(onEvent, onState, signal) {
  while (!signal.aborted) {
    onState('connecting');
    try {
      const r = await fetch('/v1/events?follow=true&limit=0', {
        headers: headers({ Accept: 'text/event-stream' }), signal,
      });
      if (r.status === 401) { onState('unauthorized'); return; }
      if (!r.ok) throw new Error(`${r.status}`);
      onState('live');
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value.replace(/\r\n?/g, '\n');
        let end;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          let name = 'message';
          const data = [];
          for (const line of block.split('\n')) {
            if (line === '' || line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            let v = colon < 0 ? '' : line.slice(colon + 1);
            if (v.startsWith(' ')) v = v.slice(1);
            if (field === 'event') name = v;
            else if (field === 'data') data.push(v);
          }
          if (name === 'event' && data.length) {
            try { onEvent(JSON.parse(data.join('\n'))); } catch { /* a malformed event is skipped */ }
          }
        }
      }
    } catch {
      if (signal.aborted) return;
    }
    onState('reconnecting');
    await sleep(2000);
  }
}
