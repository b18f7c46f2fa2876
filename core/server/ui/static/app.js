// app.js: the console's shell. It routes on the URL's hash (#/clusters,
// #/clusters/ID...), renders the matching view, shows the token form when
// the agent answers 401, and re-renders the visible page when the event
// stream says something changed. Hash routing needs no server support: the
// agent serves the same index.html for every page.
import * as api from './api.js';
import { h } from './dom.js';
import { views } from './views.js';

const routes = [
  [/^clusters$/, views.clusters],
  [/^clusters\/([^/]+)$/, views.cluster],
  [/^nodes\/([^/]+)$/, views.node],
  [/^hosts$/, views.hosts],
  [/^actions$/, views.actions],
  [/^actions\/([^/]+)$/, views.action],
  [/^events$/, views.events],
  [/^profiles$/, views.profiles],
  [/^profiles\/([^/]+)$/, views.profile],
  [/^policies$/, views.policies],
  [/^policies\/([^/]+)$/, views.policy],
  [/^types\/(profile|policy)\/([^/]+)$/, views.type],
];

const main = document.getElementById('main');
const live = document.getElementById('live');
const logout = document.getElementById('logout');

// state is the shell's: the message an operation left for the page (kept
// across live refreshes, dropped on navigation) and the render in flight.
// focusHeading says a navigation's render has not yet shown its page: a
// live refresh that supersedes that render gives the heading the focus
// in its place, instead of keeping the focus of the page being left.
// pressed says a pointer is down: a live refresh waits until it is up
// (busy, and render's last step), because a page rebuilt between a
// button's press and its release loses the click.
const state = { flash: null, generation: 0, stream: null, pending: false, path: '', relevant: () => true, focusHeading: false, pressed: false };

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = decodeURIComponent(q < 0 ? raw : raw.slice(0, q));
  return { path, query: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)) };
}

/** go navigates to a hash route. */
export function go(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

/**
 * flash shows a message above the page: the outcome of an operation, with a
 * link to the action it queued.
 */
export function flash(text, actionID, error = false) {
  state.flash = { text, actionID, error };
  showFlash();
}

function showFlash() {
  const old = document.getElementById('flash');
  if (old) old.remove();
  const f = state.flash;
  if (!f) return;
  main.prepend(h('div', { id: 'flash', class: f.error ? 'flash error' : 'flash', role: f.error ? 'alert' : 'status' },
    f.text, f.actionID ? [' ', h('a', { href: `#/actions/${f.actionID}` }, `Action ${f.actionID}`)] : null));
}

async function render(opts = {}) {
  const { path, query } = parseHash();
  if (!path) { location.replace('#/clusters'); return; }
  if (path !== state.path) state.flash = null;
  if (path !== state.path || !opts.live) state.focusHeading = true;
  state.path = path;
  const gen = ++state.generation;
  let view = null;
  let args = [];
  for (const [re, v] of routes) {
    const m = path.match(re);
    if (m) { view = v; args = m.slice(1); break; }
  }
  for (const a of document.querySelectorAll('nav a')) {
    if (path.startsWith(a.getAttribute('href').slice(2))) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const el = h('div');
  try {
    if (!view) throw new api.APIError(404, `No page is at #/${path}.`);
    // A view may say which events concern it (watch); by default all do.
    let relevant = () => true;
    await view(el, { args, query, go, flash, refresh: () => render({ live: true }), watch: (f) => { relevant = f; } });
    if (gen === state.generation) state.relevant = relevant;
  } catch (e) {
    if (gen !== state.generation) return;
    if (e instanceof api.AuthError) { showLogin(e.message); return; }
    el.replaceChildren(h('h1', {}, 'Error'), h('p', { role: 'alert' }, e.message));
  }
  // A newer render started while this one waited on the API: it wins.
  if (gen !== state.generation) return;
  // A refresh that got its data while a pointer is down waits for it to
  // come up, and then runs again (main's data-refresh says it waits).
  if (opts.live && state.pressed) {
    state.pending = true;
    main.dataset.refresh = 'held';
    return;
  }
  const kept = state.focusHeading ? null : focusKey(document.activeElement);
  main.replaceChildren(...el.childNodes);
  showFlash();
  logout.hidden = !api.token.get();
  // Keyboard and screen reader users start at the new page's heading; it
  // can hold focus (not by Tab), also through a live refresh.
  const h1 = main.querySelector('h1');
  if (h1) h1.tabIndex = -1;
  if (state.focusHeading) {
    state.focusHeading = false;
    (h1 || main).focus();
  } else if (kept) {
    refocus(kept);
  }
  startStream();
}

// focusKey names the focused element of the page so that a live refresh,
// which rebuilds the page, can focus its new twin: a keyboard user keeps
// their place instead of being sent back to the top of the document.
function focusKey(a) {
  if (!a || a === main || !main.contains(a)) return null;
  return { tag: a.tagName, op: a.dataset.op || '', href: a.getAttribute('href') || '', name: a.getAttribute('name') || '', text: a.textContent };
}

function refocus(k) {
  for (const el of main.querySelectorAll(k.tag)) {
    if ((el.dataset.op || '') === k.op && (el.getAttribute('href') || '') === k.href &&
        (el.getAttribute('name') || '') === k.name && el.textContent === k.text) {
      el.focus({ preventScroll: true });
      return;
    }
  }
  main.focus({ preventScroll: true });
}

function showLogin(message) {
  stopStream();
  const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true });
  const form = h('form', {
    onsubmit: (ev) => {
      ev.preventDefault();
      api.token.set(input.value.trim());
      render();
    },
  },
  h('label', { for: 'token' }, 'Token', input),
  h('p', { class: 'muted' }, 'Kept in this browser tab only (session storage). Make one with grove token create.'),
  h('button', { type: 'submit' }, 'Sign in'));
  main.replaceChildren(h('h1', {}, 'Sign in'), h('p', { role: 'alert' }, message), form);
  logout.hidden = true;
  input.focus();
}

// busy says whether refreshing now would get in the user's way: a pointer
// is down, a field of the page has focus or a dialog is open. The refresh
// then waits for them.
function busy() {
  const a = document.activeElement;
  return state.pressed || document.querySelector('dialog[open]') !== null ||
    (a && main.contains(a) && ['INPUT', 'SELECT', 'TEXTAREA'].includes(a.tagName));
}

let timer = 0;
function scheduleRefresh() {
  if (timer) return;
  // Events come in bursts (an action's start, its nodes, its end): one
  // render per burst.
  timer = setTimeout(() => {
    timer = 0;
    if (busy()) { state.pending = true; return; }
    render({ live: true });
  }, 250);
}

// refreshIfPending runs the refresh that waited for the user, once they
// are no longer busy.
function refreshIfPending() {
  if (state.pending && !busy()) {
    state.pending = false;
    delete main.dataset.refresh;
    render({ live: true });
  }
}

document.addEventListener('focusout', () => setTimeout(refreshIfPending, 0));
// Chromium fires a dialog's close at the next animation frame, maybe after
// it was opened again: then the refresh waits for that showing's close.
document.getElementById('confirm').addEventListener('close', refreshIfPending);
// Capturing, so a view's handler cannot hide them. The click follows the
// release in the same task: the refresh runs in a later one, after it.
document.addEventListener('pointerdown', () => { state.pressed = true; }, true);
for (const type of ['pointerup', 'pointercancel']) {
  document.addEventListener(type, () => {
    state.pressed = false;
    setTimeout(refreshIfPending, 0);
  }, true);
}

function startStream() {
  if (state.stream) return;
  const ctl = new AbortController();
  state.stream = ctl;
  api.follow((ev) => { if (state.relevant(ev)) scheduleRefresh(); }, (s) => {
    live.textContent = { connecting: 'Live updates: connecting', live: 'Live updates: on',
      reconnecting: 'Live updates: reconnecting', unauthorized: 'Live updates: off' }[s];
    live.dataset.state = s;
    if (s === 'unauthorized' && state.stream === ctl) state.stream = null;
    // The stream sends only events written after it connected: what
    // changed between the page's read and now (a create that ended, or
    // anything while it was reconnecting) would never show. Read the page
    // again once it is live; later changes come as events.
    if (s === 'live') scheduleRefresh();
  }, ctl.signal);
}

function stopStream() {
  if (state.stream) state.stream.abort();
  state.stream = null;
  live.textContent = 'Live updates: off';
  live.dataset.state = 'off';
}

logout.addEventListener('click', () => {
  api.token.clear();
  stopStream();
  render();
});

window.addEventListener('hashchange', () => render());
render();
