// views.js: one function per page. Each reads what it shows from the API,
// builds it into el, and wires its operations to the API; the shell
// (app.js) swaps it in and re-runs it when the event stream reports change.
import * as api from './api.js';
import { h, add, status, table, reason, dl, json, short, when, confirm } from './dom.js';

// PAGE is a list's page size unless the page's URL says otherwise;
// SIZES are the sizes the pager offers.
const PAGE = 50;
const SIZES = [50, 100];

// hashWith is the current page's hash with query parameters changed.
function hashWith(changes) {
  const raw = location.hash.replace(/^#\/?/, '');
  const i = raw.indexOf('?');
  const q = new URLSearchParams(i < 0 ? '' : raw.slice(i + 1));
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === null || v === '') q.delete(k); else q.set(k, v);
  }
  const s = q.toString();
  return '#/' + (i < 0 ? raw : raw.slice(0, i)) + (s ? '?' + s : '');
}

// FIRST_PAGE are the query changes that go back to a list's first page.
const FIRST_PAGE = { marker: '', back: '' };

// listParams are the paging parameters of a list page: the page size and
// the marker (Senlin's: the id of the last item of the page before), and
// where the page is: the markers of the pages before it (back), which
// the API cannot go backwards through, and its number and first item's.
function listParams(query) {
  const limit = Math.min(Math.max(Math.trunc(Number(query.get('limit'))) || PAGE, 1), 1000);
  const marker = query.get('marker') || '';
  const back = (query.get('back') || '').split(',').filter(Boolean);
  const number = marker ? back.length + 2 : 1;
  return { limit, marker: marker || undefined, back, number, offset: (number - 1) * limit };
}

// pager links to the pages around this one: the next when this one was
// full, the previous and the first when this one is not the first, and
// the page sizes. key is the field the marker is read from.
function pager(query, items, key = 'id') {
  const p = listParams(query);
  const links = [];
  if (p.marker) {
    links.push(h('a', { href: hashWith(FIRST_PAGE), 'data-page': 'first' }, 'First page'));
    const prev = p.back.slice(0, -1);
    links.push(h('a', { href: hashWith({ marker: p.back[p.back.length - 1] || '', back: prev.join(',') }), 'data-page': 'previous' }, 'Previous page'));
  }
  if (items.length >= p.limit) {
    const back = p.marker ? [...p.back, p.marker] : [];
    links.push(h('a', { href: hashWith({ marker: items[items.length - 1][key], back: back.join(',') }), 'data-page': 'next' }, 'Next page'));
  }
  if (!links.length && p.limit === PAGE) return null;
  return h('nav', { class: 'pager', 'aria-label': 'Pages' }, h('span', {}, `Page ${p.number}`), links,
    h('span', { class: 'sizes' }, SIZES.map((n) => (n === p.limit
      ? h('span', { 'aria-current': 'true' }, `${n} per page`)
      : h('a', { href: hashWith({ ...FIRST_PAGE, limit: n === PAGE ? '' : n }) }, `${n} per page`)))));
}

// pageParams are the API's paging parameters of a list page.
function pageParams(query) {
  const { limit, marker } = listParams(query);
  return { limit, marker };
}

// act runs an operation and reports its outcome above the page, with the
// action it queued; errors are reported the same way, in the agent's words.
async function act(ctx, what, fn) {
  try {
    const r = await fn();
    ctx.flash(`${what}: accepted.`, r && r.action);
    ctx.refresh();
  } catch (e) {
    if (e instanceof api.AuthError) throw e;
    ctx.flash(`${what} failed: ${e.message}`, '', true);
  }
}

// optional reads a resource that may not apply (a placement without a
// placement policy): its error becomes null.
async function optional(p) {
  try { return await p; } catch (e) { if (e instanceof api.AuthError) throw e; return null; }
}

// nodeCount is a cluster's number of nodes: past the API's inline limit
// its nodes list is only the first page, and nodes_summary counts them all.
const nodeCount = (c) => (c.nodes_summary ? c.nodes_summary.total : c.nodes.length);

const link = (kind, id, text) => (id ? h('a', { href: `#/${kind}/${id}` }, text || short(id)) : '');

function updateText(u) {
  if (!u || !u.status) return '';
  let s = u.status;
  if (u.batches) s += `, batch ${u.batch} of ${u.batches}`;
  if (u.total) s += `, ${u.updated} of ${u.total} nodes updated`;
  if (u.failures) s += `, ${u.failures} failed`;
  return s;
}

// button makes a button; its data-op names the operation for tests.
function button(text, onclick, cls) {
  const op = text.toLowerCase().replace(/[^a-z]+/g, '-').replace(/^-|-$/g, '');
  return h('button', { type: 'button', class: cls, onclick, 'data-op': op }, text);
}

// form makes a small labelled form whose submit runs fn(values).
function form(name, fields, submit, fn) {
  const inputs = fields.map(([label, el]) => { el.name = el.name || label; return [label, el]; });
  return h('form', {
    class: 'inline', 'aria-label': name,
    onsubmit: (ev) => { ev.preventDefault(); fn(Object.fromEntries(inputs.map(([, el]) => [el.name, el.value]))); },
  }, inputs.map(([label, el]) => h('label', {}, label, el)), h('button', { type: 'submit' }, submit));
}

function select(name, options, selected) {
  return h('select', { name }, options.map(([v, t]) => h('option', { value: v, selected: v === selected }, t)));
}

async function eventsTable(params, caption) {
  const evs = (await api.get('/v1/events', params)).events;
  return [table(caption, ['Time', 'Level', 'Object', 'Action', 'Status', 'Reason'], evs.map((e) => [
    when(e.timestamp), status(e.level),
    e.otype === 'NODE' ? link('nodes', e.oid, e.oname || short(e.oid)) : e.otype === 'CLUSTER' ? link('clusters', e.oid, e.oname || short(e.oid)) : `${e.otype} ${short(e.oid)}`,
    e.meta_data && e.meta_data.action ? link('actions', e.meta_data.action, e.action) : e.action, e.status, reason(e.status_reason)])), evs];
}

async function actionsTable(params, caption) {
  const acts = (await api.get('/v1/actions', params)).actions;
  return [table(caption, ['Action', 'Kind', 'Status', 'Reason', 'Created'], acts.map((a) => [
    link('actions', a.id, a.name), a.action, status(a.status), reason(a.status_reason), when(a.created_at)])), acts];
}

export const views = {
  async clusters(el, ctx) {
    const { query, go } = ctx;
    const p = pageParams(query);
    const sort = query.get('sort') || 'name:asc';
    const [cl, pols] = await Promise.all([
      api.get('/v1/clusters', { ...p, sort, status: query.get('status') }),
      api.get('/v1/policies', { limit: 200 }),
    ]);
    const polName = Object.fromEntries(pols.policies.map((x) => [x.id, x.name]));
    const needle = (query.get('q') || '').toLowerCase();
    const list = cl.clusters.filter((c) => !needle || c.name.toLowerCase().includes(needle) || (c.profile_name || '').toLowerCase().includes(needle));
    const q = h('input', { type: 'search', name: 'q', value: query.get('q') || '' });
    add(el, h('h1', {}, 'Clusters'),
      form('Filter clusters', [
        ['Name or profile contains', q],
        ['Status', select('status', [['', 'Any'], ...['ACTIVE', 'WARNING', 'ERROR', 'RESIZING', 'UPDATING', 'CHECKING', 'RECOVERING', 'INIT', 'CRITICAL'].map((s) => [s, s])], query.get('status') || '')],
        ['Sort by', select('sort', [['name:asc', 'Name'], ['status:asc', 'Status'], ['created_at:desc', 'Newest'], ['updated_at:desc', 'Recently updated']], sort)],
      ], 'Apply', (v) => go(hashWith({ ...v, ...FIRST_PAGE }))),
      table(`${list.length} clusters on this page`, ['Name', 'Status', 'Desired / actual', 'Profile', 'Policies', 'Update'], list.map((c) => [
        link('clusters', c.id, c.name), status(c.status), `${c.desired_capacity} / ${nodeCount(c)}`,
        link('profiles', c.profile_id, c.profile_name), (c.policies || []).map((id) => polName[id] || short(id)).join(', '),
        updateText(c.data && c.data.update)]), 'No clusters match.'),
      pager(query, cl.clusters));
  },

  async cluster(el, ctx) {
    const id = ctx.args[0];
    const page = listParams(ctx.query);
    const c = (await api.get(`/v1/clusters/${id}`)).cluster;
    ctx.watch((ev) => ev.cluster_id === c.id || ev.oid === c.id);
    const [nodes, binds, profiles, policies, placement, deps] = await Promise.all([
      api.get('/v1/nodes', { cluster_id: c.id, sort: 'index', ...pageParams(ctx.query) }),
      api.get(`/v1/clusters/${c.id}/policies`),
      api.get('/v1/profiles', { limit: 200 }),
      api.get('/v1/policies', { limit: 200 }),
      optional(api.get(`/v1/clusters/${c.id}/placement`)),
      optional(api.get(`/v1/clusters/${c.id}/dependencies`)),
    ]);
    const [acts] = await actionsTable({ cluster_id: c.id, sort: 'created_at:desc', limit: 10 }, 'Latest actions of this cluster');
    const [evs] = await eventsTable({ cluster_id: c.id, sort: 'timestamp:desc', limit: 10 }, 'Latest events of this cluster');
    const u = c.data && c.data.update;
    const path = `/v1/clusters/${c.id}`;
    const post = (body) => api.call('POST', `${path}/actions`, body);
    const updateOps = [];
    if (u && ['updating', 'rolling back'].includes(u.status) && u.action) {
      updateOps.push(button('Stop update', () => act(ctx, 'Stop update', () => api.call('PATCH', `/v1/actions/${u.action}`, { action: { status: 'CANCELLED' } }))));
    }
    if (u && u.status === 'paused') {
      updateOps.push(button('Resume update', () => act(ctx, 'Resume update', () => post({ update_resume: {} }))));
      updateOps.push(button('Roll back update', () => act(ctx, 'Roll back update', () => post({ update_rollback: {} }))));
    }
    // A stopped update is finished by updating to its target again
    // (docs/orchestration.md); update_resume is for a paused one.
    if (u && u.status === 'stopped' && u.target_profile) {
      updateOps.push(button('Continue update', () => act(ctx, 'Continue update', () => api.call('PATCH', path, { cluster: { profile_id: u.target_profile } }))));
    }
    add(el, 
      h('h1', {}, `Cluster ${c.name}`),
      dl([['Status', status(c.status)], ['Reason', c.status_reason], ['Desired / actual', `${c.desired_capacity} / ${nodeCount(c)}`],
        ['Min / max', `${c.min_size} / ${c.max_size}`], ['Profile', link('profiles', c.profile_id, c.profile_name)],
        ['Update', updateText(u)], ['Created', when(c.created_at)], ['ID', c.id]]),
      h('section', { 'aria-label': 'Operations' }, h('h2', {}, 'Operations'),
        form('Resize', [['Desired capacity', h('input', { type: 'number', min: 0, name: 'number', value: c.desired_capacity, required: true })]],
          'Resize', (v) => act(ctx, 'Resize', () => post({ resize: { adjustment_type: 'EXACT_CAPACITY', number: Number(v.number) } }))),
        form('Roll update', [['New profile', select('profile_id', profiles.profiles.map((p) => [p.id, p.name]), c.profile_id)]],
          'Roll update', (v) => act(ctx, 'Update', () => api.call('PATCH', path, { cluster: { profile_id: v.profile_id } }))),
        form('Attach policy', [['Policy', select('policy_id', policies.policies.map((p) => [p.id, p.name]))]],
          'Attach', (v) => act(ctx, 'Attach policy', () => post({ policy_attach: { policy_id: v.policy_id } }))),
        h('div', { class: 'ops' },
          button('Check', () => act(ctx, 'Check', () => post({ check: {} }))),
          button('Recover', () => act(ctx, 'Recover', () => post({ recover: {} }))),
          updateOps,
          button('Delete cluster…', async () => {
            if (!(await confirm(`Delete cluster ${c.name} and its ${nodeCount(c)} nodes?`))) return;
            await act(ctx, `Delete cluster ${c.name}`, () => api.call('DELETE', path));
          }, 'danger'))),
      h('h2', {}, 'Nodes'),
      table(nodes.nodes.length ? `${page.offset + 1}–${page.offset + nodes.nodes.length} of ${nodeCount(c)} nodes` : '0 nodes', ['Node', 'Status', 'Host', 'Address', 'Health', 'Restarts', 'Process'], nodes.nodes.map((n) => [
        link('nodes', n.id, n.name), status(n.status), n.host || '', (n.data && n.data.address) || '', reason(n.status_reason),
        String((n.data && n.data.restarts && n.data.restarts.count) || 0), n.data && n.data.pid ? `pid ${n.data.pid}` : '']), 'No nodes.'),
      pager(ctx.query, nodes.nodes),
      h('h2', {}, 'Policies'),
      table('Bound policies', ['Policy', 'Type', 'Enabled', ''], binds.cluster_policies.map((b) => [
        link('policies', b.policy_id, b.policy_name), b.policy_type, b.enabled ? 'yes' : 'no',
        button(`Detach ${b.policy_name}`, () => act(ctx, `Detach ${b.policy_name}`, () => post({ policy_detach: { policy_id: b.policy_id } })))]), 'No policies attached.'),
      placement ? [h('h2', {}, 'Placement'), json(placement.placement || placement)] : null,
      deps && deps.dependencies && (deps.dependencies.groups.length || deps.dependencies.dependents.length || deps.dependencies.required_by.length)
        ? [h('h2', {}, 'Dependencies'), dl([['Result', status(deps.dependencies.result)], ['State', deps.dependencies.state]]), json(deps.dependencies)] : null,
      h('h2', {}, 'Actions'), acts, h('p', {}, h('a', { href: `#/actions?cluster_id=${c.id}` }, 'All actions of this cluster')),
      h('h2', {}, 'Events'), evs, h('p', {}, h('a', { href: `#/events?cluster_id=${c.id}` }, 'All events of this cluster')));
  },

  async node(el, ctx) {
    const n = (await api.get(`/v1/nodes/${ctx.args[0]}`, { show_details: true })).node;
    ctx.watch((ev) => ev.oid === n.id || (!!n.cluster_id && ev.cluster_id === n.cluster_id));
    const [acts] = await actionsTable({ target: n.id, sort: 'created_at:desc', limit: 10 }, 'Latest actions on this node');
    const [evs] = await eventsTable({ oid: n.id, sort: 'timestamp:desc', limit: 10 }, 'Latest events of this node');
    const post = (body) => api.call('POST', `/v1/nodes/${n.id}/actions`, body);
    add(el, h('h1', {}, `Node ${n.name}`),
      dl([['Status', status(n.status)], ['Reason', n.status_reason], ['Cluster', link('clusters', n.cluster_id)],
        ['Host', n.host], ['Address', n.data && n.data.address], ['Physical id', n.physical_id],
        ['Restarts', String((n.data && n.data.restarts && n.data.restarts.count) || 0)],
        ['Profile', link('profiles', n.profile_id, n.profile_name)], ['Index', n.index], ['Created', when(n.created_at)], ['ID', n.id]]),
      h('h2', {}, 'Operations'),
      h('div', { class: 'ops' },
        button('Check', () => act(ctx, 'Check', () => post({ check: {} }))),
        button('Recover', () => act(ctx, 'Recover', () => post({ recover: {} }))),
        button('Delete node…', async () => {
          if (!(await confirm(`Delete node ${n.name}?`))) return;
          await act(ctx, `Delete node ${n.name}`, () => api.call('DELETE', `/v1/nodes/${n.id}`));
        }, 'danger')),
      h('h2', {}, 'Data'), json(n.data), h('h2', {}, 'Actions'), acts, h('h2', {}, 'Events'), evs);
  },

  async hosts(el, ctx) {
    // The API lists every host (a fleet's machines, not its workloads):
    // the page is cut here, by name, with the same marker as the others.
    const p = listParams(ctx.query);
    const all = (await api.get('/v1/hosts')).hosts.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const from = p.marker ? all.findIndex((x) => x.name > p.marker) : 0;
    const hs = from < 0 ? [] : all.slice(from, from + p.limit);
    const load = (l) => (l ? ['load1', 'load5', 'load15'].map((k) => (l[k] ?? '–')).join(' / ') : '');
    add(el, h('h1', {}, 'Hosts'),
      table(`${hs.length} of ${all.length} hosts`, ['Host', 'State', 'Availability', 'Kind', 'Driver', 'Load (1 / 5 / 15 min)', 'Nodes', 'Heartbeat'], hs.map((x) => [
        x.name, status(x.state), status(x.availability), x.kind, x.driver, load(x.load), String(x.nodes ?? ''), when(x.heartbeat)]), 'No hosts.'),
      pager(ctx.query, hs, 'name'));
  },

  async actions(el, ctx) {
    const { query, go } = ctx;
    const p = pageParams(query);
    const params = { ...p, sort: 'created_at:desc', status: query.get('status'), cluster_id: query.get('cluster_id'), action: query.get('action') };
    const [t, acts] = await actionsTable(params, 'Actions, newest first');
    add(el, h('h1', {}, 'Actions'),
      form('Filter actions', [
        ['Status', select('status', [['', 'Any'], ...['RUNNING', 'WAITING', 'READY', 'SUCCEEDED', 'FAILED', 'CANCELLED'].map((s) => [s, s])], query.get('status') || '')],
        ['Kind', h('input', { name: 'action', value: query.get('action') || '', placeholder: 'CLUSTER_RESIZE' })],
      ], 'Apply', (v) => go(hashWith({ ...v, ...FIRST_PAGE }))),
      t, pager(query, acts));
  },

  async action(el, ctx) {
    const a = (await api.get(`/v1/actions/${ctx.args[0]}`)).action;
    // Finished, it changes no more; running, its children's events name
    // its cluster or its target.
    ctx.watch((ev) => !['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(a.status) &&
      (ev.oid === a.target || (!!a.cluster_id && ev.cluster_id === a.cluster_id)));
    const kids = (await api.get('/v1/actions', { parent_id: a.id, sort: 'created_at', ...pageParams(ctx.query) })).actions;
    const pr = a.progress || {};
    const done = ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(a.status);
    add(el, h('h1', {}, `Action ${a.name}`),
      dl([['Status', status(a.status)], ['Reason', a.status_reason], ['Kind', a.action], ['Cause', a.cause],
        ['Target', a.target === a.cluster_id ? link('clusters', a.target) : link('nodes', a.target)],
        ['Progress', pr.step ? `${pr.step}: ${pr.done || 0} of ${pr.nodes || 0} nodes done${pr.failed ? `, ${pr.failed} failed` : ''}${pr.batches ? `, batch ${pr.batch} of ${pr.batches}` : ''}` : ''],
        ['Started', when(a.start_time)], ['Ended', when(a.end_time)], ['ID', a.id]]),
      done ? null : h('div', { class: 'ops' }, button('Cancel action', () => act(ctx, 'Cancel', () => api.call('PATCH', `/v1/actions/${a.id}`, { action: { status: 'CANCELLED' } })))),
      h('h2', {}, 'Children'),
      table(`${kids.length} child actions on this page`, ['Action', 'Kind', 'Status', 'Reason'], kids.map((k) => [link('actions', k.id, k.name), k.action, status(k.status), reason(k.status_reason)]), 'No child actions.'),
      pager(ctx.query, kids),
      h('h2', {}, 'Inputs'), json(a.inputs), h('h2', {}, 'Outputs'), json(a.outputs));
  },

  async events(el, ctx) {
    const { query, go } = ctx;
    const p = pageParams(query);
    const params = { ...p, sort: 'timestamp:desc', level: query.get('level'), otype: query.get('otype'), cluster_id: query.get('cluster_id') };
    const [t, evs] = await eventsTable(params, 'Events, newest first');
    add(el, h('h1', {}, 'Events'),
      form('Filter events', [
        ['Level', select('level', [['', 'Any'], ...['INFO', 'WARNING', 'ERROR', 'CRITICAL'].map((s) => [s, s])], query.get('level') || '')],
        ['Object', select('otype', [['', 'Any'], ['CLUSTER', 'Cluster'], ['NODE', 'Node']], query.get('otype') || '')],
      ], 'Apply', (v) => go(hashWith({ ...v, ...FIRST_PAGE }))),
      t, pager(query, evs));
  },

  profiles: (el, ctx) => specList(el, ctx, 'profiles', 'Profiles', 'profile'),
  policies: (el, ctx) => specList(el, ctx, 'policies', 'Policies', 'policy'),
  profile: (el, ctx) => specOne(el, ctx, 'profiles', 'profile'),
  policy: (el, ctx) => specOne(el, ctx, 'policies', 'policy'),

  async type(el, ctx) {
    const [kind, name] = ctx.args;
    const t = (await api.get(`/v1/${kind}-types/${name}`))[`${kind}_type`];
    ctx.watch(() => false); // a type's schema changes with the plugin, not with events
    const rows = Object.entries(t.schema || {}).map(([k, s]) => [k, s.type, s.required ? 'yes' : 'no', s.updatable ? 'yes' : 'no', s.sensitive ? 'yes' : '', reason(s.description)]);
    add(el, h('h1', {}, `${kind === 'profile' ? 'Profile' : 'Policy'} type ${t.name}`),
      table('Properties', ['Property', 'Type', 'Required', 'Updatable', 'Sensitive', 'Description'], rows, 'No properties.'),
      h('h2', {}, 'Schema'), json(t.schema));
  },
};

async function specList(el, ctx, path, title, kind) {
  const p = pageParams(ctx.query);
  const [list, types] = await Promise.all([api.get(`/v1/${path}`, { ...p, sort: 'name' }), api.get(`/v1/${kind}-types`)]);
  const items = list[path];
  add(el, h('h1', {}, title),
    table(`${items.length} ${path} on this page`, ['Name', 'Type', 'Created'], items.map((x) => [link(path, x.id, x.name), typeLink(kind, x.type), when(x.created_at)]), `No ${path}.`),
    pager(ctx.query, items),
    h('h2', {}, 'Types'),
    h('ul', {}, types[`${kind}_types`].map((t) => h('li', {}, typeLink(kind, `${t.name}-${t.version}`)))));
}

function typeLink(kind, type) {
  return h('a', { href: `#/types/${kind}/${encodeURIComponent(type)}` }, type);
}

async function specOne(el, ctx, path, kind) {
  const x = (await api.get(`/v1/${path}/${ctx.args[0]}`))[kind];
  add(el, h('h1', {}, `${kind === 'profile' ? 'Profile' : 'Policy'} ${x.name}`),
    dl([['Type', typeLink(kind, x.type)], ['Created', when(x.created_at)], ['Updated', when(x.updated_at)], ['ID', x.id]]),
    h('h2', {}, 'Spec'), h('p', { class: 'muted' }, 'Sensitive values are shown as the agent redacts them.'), json(x.spec),
    h('div', { class: 'ops' }, h('button', {
      type: 'button', class: 'danger',
      onclick: async () => {
        if (!(await confirm(`Delete ${kind} ${x.name}?`))) return;
        try { await api.call('DELETE', `/v1/${path}/${x.id}`); ctx.flash(`Deleted ${kind} ${x.name}.`); ctx.go(`#/${path}`); } catch (e) {
          if (e instanceof api.AuthError) throw e;
          ctx.flash(`Delete failed: ${e.message}`, '', true);
        }
      },
    }, `Delete ${kind}…`)));
}
