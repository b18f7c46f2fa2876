// dom.js: small helpers that build elements. Text always goes in as text
// nodes, never as HTML, so nothing the API returns can become markup.

/** h makes an element: h('a', {href: '#/x'}, 'text', child...). */
export function h(tag, props = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : String(kid));
  }
  return el;
}

const statusKinds = {
  ok: ['ACTIVE', 'SUCCEEDED', 'OK', 'up', 'active', 'completed', 'satisfied', 'running', 'INFO'],
  bad: ['ERROR', 'FAILED', 'CRITICAL', 'down', 'stopped', 'DELETED'],
  warn: ['WARNING', 'CANCELLED', 'paused', 'drain', 'disabled', 'SUSPENDED', 'rolled back'],
};

/** status shows a status as its word, coloured and marked alike. */
export function status(s) {
  const v = String(s ?? '');
  let kind = 'busy';
  for (const [k, list] of Object.entries(statusKinds)) if (list.includes(v)) { kind = k; break; }
  return h('span', { class: `status ${kind}` }, v || '—');
}

/**
 * table makes a table whose first column heads its rows. cols are the
 * column titles; rows are arrays of cells (strings or nodes).
 */
export function table(caption, cols, rows, empty = 'None.') {
  if (!rows.length) return h('p', { class: 'muted' }, empty);
  return h('div', { class: 'scroll' }, h('table', {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((cell, i) =>
      i === 0 ? h('th', { scope: 'row' }, cell) : h('td', cell && cell.reason ? { class: 'reason' } : {}, cell && cell.reason ? cell.reason : cell)))))));
}

/** reason marks a long text cell (it wraps). */
export const reason = (text) => ({ reason: text ?? '' });

/** dl is a description list of [term, value] pairs, skipping empty values. */
export function dl(pairs) {
  return h('dl', {}, pairs.filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/** json shows a value as indented JSON. */
export const json = (v) => h('pre', {}, JSON.stringify(v, null, 2));

/** short shortens an id to its first block for tables. */
export const short = (id) => (id ? String(id).split('-')[0] : '');

/** when shows an API time (RFC 3339 or epoch seconds) in local time. */
export function when(t) {
  if (t === null || t === undefined || t === '') return '';
  const d = typeof t === 'number' ? new Date(t * 1000) : new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString();
}

// asking is the confirmation dialog's question in progress (how to answer
// it), and giveBack what to focus when the dialog closes. One <dialog
// id="confirm"> serves every confirm(); its listeners are added once.
let asking = null;
let giveBack = null;
let wired = false;

// answer settles the question in progress, once; later calls do nothing.
function answer(ok) {
  const q = asking;
  asking = null;
  if (q) q(ok);
}

// wire takes the dialog's answer from the user's own act, at once: the
// form's submit (its submitter is OK or Cancel) and the dialog's cancel
// (Escape). Not from its close event: Chromium fires that at the next
// animation frame, and by then the dialog may have been opened again for
// a new question, whose returnValue confirm() had just reset. The late
// close event of a Cancel then answered the new question "no" at once,
// and its OK, a moment later, found nobody listening: the delete was
// never sent. The close event only settles a question the dialog was
// closed on some other way (dialog.close()), and gives focus back.
function wire(dlg) {
  if (wired) return;
  wired = true;
  dlg.querySelector('form').addEventListener('submit', (ev) => answer(!!ev.submitter && ev.submitter.value === 'ok'));
  dlg.addEventListener('cancel', () => answer(false));
  dlg.addEventListener('close', () => {
    // Open again: this is an earlier showing's close, come late.
    if (dlg.open) return;
    answer(dlg.returnValue === 'ok');
    // Closed, the dialog gives focus back to what opened it (or, if a
    // live refresh rebuilt the page meanwhile, to its twin: the button
    // of the same operation).
    const back = giveBack;
    giveBack = null;
    if (!back) return;
    const el = back.el && back.el.isConnected ? back.el
      : back.op ? document.querySelector(`main [data-op="${CSS.escape(back.op)}"]`) : null;
    if (el) el.focus();
  });
}

/**
 * confirm asks in the page's dialog element and resolves true when the
 * user chose the dangerous button. The answer comes from the dialog's own
 * buttons and keys only: a live refresh that rebuilds the page meanwhile,
 * button that opened the dialog included, changes nothing.
 */
export function confirm(text, okLabel = 'Delete') {
  const dlg = document.getElementById('confirm');
  wire(dlg);
  // A question not answered yet (the dialog opened again before its
  // close) is answered "no": one question at a time.
  answer(false);
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = okLabel;
  const opener = document.activeElement;
  if (opener && !dlg.contains(opener)) giveBack = { el: opener, op: (opener.dataset && opener.dataset.op) || '' };
  dlg.returnValue = '';
  return new Promise((resolve) => {
    asking = resolve;
    if (!dlg.open) dlg.showModal();
  });
}

/** add appends kids to el, skipping empty ones (null, false, undefined). */
export function add(el, ...kids) {
  el.append(...h('div', {}, ...kids).childNodes);
}
