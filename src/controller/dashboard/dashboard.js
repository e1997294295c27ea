// Corral's web dashboard: pages drawn from the controller's JSON API (docs/api.md) with the
// caller's own token, so every user sees what the API shows them. Routes are URL fragments:
// #/nodes, #/queue, #/job/ID, #/accounts. A fragment may carry "token=..." (e.g.
// /ui/#/queue?token=T): it moves into sessionStorage and out of the address bar. No library,
// no external resource; charts are inline SVG drawn here.
'use strict';

const TOKEN_KEY = 'corral.token';
const SVG_NS = 'http://www.w3.org/2000/svg';

// An element with attributes and children (strings become text nodes: never parsed as HTML).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

// The route and the token of the fragment ("#/job/7?token=abc" -> ["job", "7"], "abc").
function parseHash() {
  let h = location.hash.replace(/^#\/?/, '');
  let token = null;
  const q = h.indexOf('?');
  if (q >= 0) {
    const params = new URLSearchParams(h.slice(q + 1));
    token = params.get('token');
    h = h.slice(0, q);
  } else if (h.startsWith('token=')) {
    token = decodeURIComponent(h.slice(6));
    h = '';
  }
  return {parts: h.split('/').filter((p) => p !== ''), token};
}

function token() { return sessionStorage.getItem(TOKEN_KEY); }

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

// GET `path` of the API with the session's token; the decoded JSON, or throws ApiError.
async function api(path) {
  const r = await fetch(path, {headers: {'Authorization': 'Bearer ' + token()}});
  const text = await r.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
  if (!r.ok) {
    const msg = body && body.error ? (body.error.message || JSON.stringify(body.error)) : text;
    throw new ApiError(r.status, `${path}: ${r.status} ${msg || r.statusText}`);
  }
  return body;
}

// Formatting.
function fmtTime(t) {
  if (!t) return '';
  const d = new Date(t);
  if (isNaN(d)) return String(t);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}
function fmtDuration(s) {
  if (s === 'UNLIMITED' || s === null || s === undefined) return s || '';
  s = Number(s);
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60), sec = Math.floor(s % 60);
  const hms = [h, m, sec].map((x) => String(x).padStart(2, '0')).join(':');
  return d > 0 ? `${d}-${hms}` : hms;
}
function fmtNum(x, digits) { return Number(x || 0).toFixed(digits); }
// A GPU set as the API writes it: an array of indices (or a "0-3,5" string).
function gpuList(set) {
  if (Array.isArray(set)) return set.map(Number);
  if (typeof set !== 'string' || set === '') return [];
  const out = [];
  for (const part of set.split(',')) {
    const [a, b] = part.split('-').map(Number);
    for (let i = a; i <= (isNaN(b) ? a : b); i++) out.push(i);
  }
  return out;
}
function jobLink(id) { return el('a', {href: `#/job/${id}`, class: 'job-link'}, String(id)); }
function jobGpus(job) {
  const r = (job.spec && job.spec.resources) || {};
  if (r.gpus) return r.gpus;
  if (r.gpus_per_node) return r.gpus_per_node * (r.nodes || 1);
  if (r.gpus_per_task) return r.gpus_per_task * (r.ntasks || 1);
  const alloc = (job.allocation && job.allocation.nodes) || [];
  return alloc.reduce((n, a) => n + gpuList(a.gpus).length, 0);
}
function table(headers, rows, attrs) {
  return el('table', attrs || {}, el('thead', {}, el('tr', {}, headers.map((h) => el('th', {}, h)))),
            el('tbody', {}, rows));
}

// Pages. Each returns the nodes of <main>.

async function nodesPage() {
  const [nodes, jobs] = await Promise.all([api('/api/v1/nodes'), api('/api/v1/jobs')]);
  // Which job holds each GPU: from the running jobs' allocations.
  const holder = new Map();
  for (const j of jobs.jobs || []) {
    if (j.state !== 'RUNNING') continue;
    for (const a of (j.allocation && j.allocation.nodes) || []) {
      for (const g of gpuList(a.gpus)) holder.set(`${a.node_name}/${g}`, j);
    }
  }
  // Software drift: a partition whose nodes report more than one driver/CUDA pair.
  const stack = (inv) => `driver ${inv.driver_version || '?'}, CUDA ${inv.cuda_version || '?'}`;
  const stacks = new Map();
  for (const n of nodes.nodes || []) {
    for (const p of n.partitions || []) {
      if (!stacks.has(p)) stacks.set(p, new Set());
      stacks.get(p).add(stack(n.inventory || {}));
    }
  }
  const cards = (nodes.nodes || []).map((n) => {
    const inv = n.inventory || {};
    const drift = (n.partitions || []).filter((p) => stacks.get(p).size > 1);
    const failed = new Set(gpuList(n.failed_gpus));
    const alloc = new Set(gpuList(n.alloc_gpus));
    const down = !n.responding || n.state === 'DOWN';
    const cells = (inv.gpus || []).map((g) => {
      let state = 'free';
      if (failed.has(g.index)) state = 'failed';
      else if (down) state = 'down';
      else if (alloc.has(g.index)) state = 'allocated';
      const j = holder.get(`${inv.name}/${g.index}`);
      const util = j && j.usage && j.usage.gpu_util_mean > 0 ? `${Math.round(j.usage.gpu_util_mean)}%` : null;
      return el('div', {class: `gpu ${state}`, 'data-gpu': g.index, 'data-state': state,
                        title: `GPU ${g.index}: ${g.model || ''} ${g.memory_mb || ''} MB, ${state}`},
                el('div', {class: 'idx'}, String(g.index)),
                el('div', {}, j ? el('a', {href: `#/job/${j.id}`, class: 'job-link'}, `job ${j.id}`) : state),
                util ? el('div', {class: 'util'}, util) : null);
    });
    return el('div', {class: 'node', 'data-node': inv.name},
              el('span', {class: `state ${n.state}`}, n.state),
              el('div', {class: 'name'}, inv.name),
              el('div', {class: 'meta'},
                 `${(n.partitions || []).join(',')} · CPUs ${n.alloc_cpus || 0}/${inv.cpus || 0}` +
                 ` · GPUs ${alloc.size}/${(inv.gpus || []).length}` +
                 (n.reason ? ` · ${n.reason}` : '')),
              el('div', {class: 'meta'}, stack(inv)),
              drift.length ? el('div', {class: 'drift', 'data-drift': drift.join(',')},
                                `software differs from other nodes of ${drift.join(', ')}`) : null,
              el('div', {class: 'gpus'}, cells));
  });
  const legend = el('div', {class: 'legend'},
                    ['free', 'allocated', 'failed', 'down'].map((s) => el('span', {}, el('i', {class: s}), s)));
  return [el('h1', {}, `Nodes (${cards.length})`), legend, el('p'), el('div', {class: 'grid', id: 'node-grid'}, cards)];
}

async function queuePage() {
  const jobs = (await api('/api/v1/jobs')).jobs || [];
  const pending = jobs.filter((j) => j.state === 'PENDING')
                      .sort((a, b) => (b.priority || 0) - (a.priority || 0) || a.id - b.id);
  const running = jobs.filter((j) => j.state === 'RUNNING');
  const spec = (j) => j.spec || {};
  const pendingRows = pending.map((j) => el('tr', {'data-job': j.id},
      el('td', {}, jobLink(j.id)), el('td', {}, spec(j).name || ''), el('td', {}, spec(j).user || ''),
      el('td', {}, spec(j).account || ''), el('td', {}, j.partition || ''),
      el('td', {class: 'num'}, String(jobGpus(j))), el('td', {class: 'num'}, String(j.priority || 0)),
      el('td', {class: 'reason'}, j.reason || ''), el('td', {}, j.reason_detail || ''),
      el('td', {class: 'estimated'}, j.estimated_start ? fmtTime(j.estimated_start) : 'unknown')));
  const runningRows = running.map((j) => el('tr', {'data-job': j.id},
      el('td', {}, jobLink(j.id)), el('td', {}, spec(j).name || ''), el('td', {}, spec(j).user || ''),
      el('td', {}, spec(j).account || ''), el('td', {}, j.partition || ''),
      el('td', {}, ((j.allocation && j.allocation.nodes) || []).map((a) => a.node_name).join(',')),
      el('td', {class: 'num'}, String(jobGpus(j))), el('td', {}, fmtTime(j.start_time)),
      el('td', {}, fmtDuration(j.time_limit))));
  return [
    el('h1', {}, 'Queue'),
    el('h2', {}, `Pending (${pending.length})`),
    pending.length ? table(['Job', 'Name', 'User', 'Account', 'Partition', 'GPUs', 'Priority',
                            'Reason', 'Detail', 'Estimated start'], pendingRows, {id: 'pending'})
                   : el('p', {class: 'muted'}, 'No pending jobs.'),
    el('h2', {}, `Running (${running.length})`),
    running.length ? table(['Job', 'Name', 'User', 'Account', 'Partition', 'Nodes', 'GPUs',
                            'Started', 'Time limit'], runningRows, {id: 'running'})
                   : el('p', {class: 'muted'}, 'No running jobs.'),
  ];
}

// A line chart of `points` ([[x, y], ...], x in ms) as inline SVG.
function lineChart(title, points, unit, yMax) {
  const W = 320, H = 140, L = 36, B = 20, T = 16;
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs);
  const top = yMax || Math.max(1, ...ys);
  const sx = (x) => L + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (W - L - 4);
  const sy = (y) => H - B - (Math.min(y, top) / top) * (H - B - T);
  const path = points.map((p, i) => `${i ? 'L' : 'M'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join('');
  return el('div', {class: 'chart'}, el('div', {class: 'title'}, title),
            svg('svg', {width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title},
                svg('line', {class: 'axis', x1: L, y1: H - B, x2: W - 4, y2: H - B}),
                svg('line', {class: 'axis', x1: L, y1: T, x2: L, y2: H - B}),
                svg('text', {x: 2, y: T + 4}, `${Math.round(top)}${unit}`),
                svg('text', {x: 2, y: H - B}, `0${unit}`),
                svg('text', {x: L, y: H - 4}, new Date(x0).toISOString().slice(11, 19)),
                svg('text', {x: W - 50, y: H - 4}, new Date(x1).toISOString().slice(11, 19)),
                svg('path', {class: 'line', d: path})));
}

// The GPUs of a /gpustats answer (GpuStatsInfo, docs/api.md): each with its totals and its
// downsampled series, `buckets` [{start, util_mean, mem_max_mb, energy_joules, ...}].
function gpuSeries(stats) {
  const list = (stats && stats.gpus) || [];
  return list.map((g) => ({
    label: `${g.node || ''} GPU ${g.gpu !== undefined ? g.gpu : ''}`.trim(),
    gpu: g,
    points: Array.isArray(g.buckets) ? g.buckets : (Array.isArray(g.samples) ? g.samples : []),
  }));
}

const CHART_FIELDS = [
  {key: 'util_mean', title: 'utilisation', unit: '%', max: 100},
  {key: 'mem_max_mb', title: 'memory', unit: ' MB', max: (g) => g.memory_mb || 0},
  {key: 'power_watts', title: 'power', unit: ' W'},
];

function pointTime(p) {
  const t = p.start ?? p.t ?? p.time;
  return typeof t === 'number' ? (t < 1e11 ? t * 1000 : t) : Date.parse(t);
}

async function gpuCharts(id) {
  let stats;
  try {
    stats = await api(`/api/v1/jobs/${id}/gpustats`);
  } catch (e) {
    return el('p', {class: 'muted', id: 'gpustats'}, 'no GPU samples');
  }
  const series = gpuSeries(stats);
  if (!series.length) return el('p', {class: 'muted', id: 'gpustats'}, 'no GPU samples');
  const summary = table(['GPU', 'Model', 'Samples', 'Mean util.', 'Peak util.', 'Idle', 'Peak memory', 'Energy'],
      series.map(({label, gpu: g}) => el('tr', {'data-gpu': label},
          el('td', {}, label), el('td', {}, g.model || ''), el('td', {class: 'num'}, String(g.samples ?? '')),
          el('td', {class: 'num'}, `${fmtNum(g.util_mean, 1)}%`), el('td', {class: 'num'}, `${fmtNum(g.util_max, 0)}%`),
          el('td', {class: 'num'}, `${fmtNum((g.idle_fraction || 0) * 100, 0)}%`),
          el('td', {class: 'num'}, `${g.mem_max_mb || 0}${g.memory_mb ? ' / ' + g.memory_mb : ''} MB`),
          el('td', {class: 'num'}, `${fmtNum((g.energy_joules || 0) / 3.6e6, 3)} kWh`))),
      {id: 'gpu-summary'});
  const charts = [];
  for (const {label, gpu, points} of series) {
    if (points.length < 1) continue;
    for (const f of CHART_FIELDS) {
      if (typeof points[0][f.key] !== 'number') continue;
      const max = typeof f.max === 'function' ? f.max(gpu) : f.max;
      charts.push(lineChart(`${label} ${f.title}`, points.map((p) => [pointTime(p), p[f.key]]), f.unit, max));
    }
  }
  return el('div', {id: 'gpustats'},
            stats.waste_note ? el('p', {class: 'error', id: 'waste'}, stats.waste_note) : null,
            summary, el('p'), el('div', {class: 'charts'}, charts));
}

async function jobPage(id) {
  if (!/^\d+$/.test(id || '')) throw new ApiError(400, `job "${id}": not a job number`);
  const j = await api(`/api/v1/jobs/${id}`);
  const s = j.spec || {};
  const u = j.usage || {};
  const alloc = ((j.allocation && j.allocation.nodes) || [])
                    .map((a) => `${a.node_name} (GPUs ${gpuList(a.gpus).join(',') || 'none'}, ${a.cpus} CPUs)`).join('; ');
  const rows = [
    ['Name', s.name], ['User', s.user], ['Account', s.account], ['QOS', s.qos],
    ['State', j.state], ['Reason', j.reason === 'None' ? '' : j.reason], ['Detail', j.reason_detail],
    ['Partition', j.partition], ['GPUs', jobGpus(j)], ['Priority', j.priority],
    ['Submitted', fmtTime(j.submit_time)], ['Estimated start', fmtTime(j.estimated_start)],
    ['Started', fmtTime(j.start_time)], ['Ended', fmtTime(j.end_time)],
    ['Time limit', fmtDuration(j.time_limit)], ['Allocation', alloc],
    ['Exit code', j.end_time ? `${j.exit_code}${j.exit_signal ? ' signal ' + j.exit_signal : ''}` : ''],
    ['GPU-hours', fmtNum((u.gpu_seconds || 0) / 3600, 2)],
    ['GPU utilisation', u.gpu_util_mean ? `mean ${fmtNum(u.gpu_util_mean, 1)}%, peak ${fmtNum(u.gpu_util_max, 0)}%` : ''],
    ['Peak GPU memory', u.gpu_mem_max_mb ? `${u.gpu_mem_max_mb} MB` : ''],
    ['Energy', u.energy_joules ? `${fmtNum(u.energy_joules / 3.6e6, 2)} kWh` : ''],
  ].filter(([, v]) => v !== undefined && v !== null && v !== '')
   .map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {'data-field': k}, String(v))));
  return [el('h1', {}, `Job ${j.id}`), el('table', {id: 'job'}, el('tbody', {}, rows)),
          el('h2', {}, 'GPUs'), await gpuCharts(j.id)];
}

async function accountsPage() {
  const jobs = (await api('/api/v1/jobs?all=1')).jobs || [];
  const now = Date.now();
  const by = new Map();
  for (const j of jobs) {
    const name = (j.spec && j.spec.account) || '(none)';
    if (!by.has(name)) by.set(name, {name, users: new Set(), running: 0, pending: 0, done: 0, gpus: 0, gpuHours: 0});
    const a = by.get(name);
    if (j.spec && j.spec.user) a.users.add(j.spec.user);
    let gpuSeconds = (j.usage && j.usage.gpu_seconds) || 0;
    if (j.state === 'RUNNING') {
      a.running++;
      const n = jobGpus(j);
      a.gpus += n;
      if (!gpuSeconds && j.start_time) gpuSeconds = n * Math.max(0, now - Date.parse(j.start_time)) / 1000;
    } else if (j.state === 'PENDING') {
      a.pending++;
    } else {
      a.done++;
    }
    a.gpuHours += gpuSeconds / 3600;
  }
  const accounts = [...by.values()].sort((x, y) => y.gpuHours - x.gpuHours || x.name.localeCompare(y.name));
  const rows = accounts.map((a) => el('tr', {'data-account': a.name},
      el('td', {}, a.name), el('td', {class: 'num'}, String(a.users.size)),
      el('td', {class: 'num'}, String(a.running)), el('td', {class: 'num'}, String(a.pending)),
      el('td', {class: 'num'}, String(a.done)), el('td', {class: 'num'}, String(a.gpus)),
      el('td', {class: 'num'}, fmtNum(a.gpuHours, 2))));
  // GPU-hours by account as horizontal bars.
  const W = 420, rowH = 22, L = 110;
  const max = Math.max(0.01, ...accounts.map((a) => a.gpuHours));
  const bars = svg('svg', {width: W, height: rowH * accounts.length + 4, role: 'img', 'aria-label': 'GPU-hours by account'});
  accounts.forEach((a, i) => {
    const w = Math.max(1, (a.gpuHours / max) * (W - L - 60));
    bars.append(svg('text', {x: 0, y: i * rowH + 15}, a.name),
                svg('rect', {class: 'bar', x: L, y: i * rowH + 4, width: w.toFixed(1), height: rowH - 8}),
                svg('text', {x: L + w + 4, y: i * rowH + 15}, fmtNum(a.gpuHours, 2)));
  });
  return [el('h1', {}, 'Usage by account'),
          accounts.length ? table(['Account', 'Users', 'Running', 'Pending', 'Ended', 'GPUs in use', 'GPU-hours'],
                                  rows, {id: 'accounts'})
                          : el('p', {class: 'muted'}, 'No jobs visible to you.'),
          el('h2', {}, 'GPU-hours'), el('div', {class: 'chart'}, bars)];
}

const PAGES = {nodes: nodesPage, queue: queuePage, job: jobPage, accounts: accountsPage};

async function render() {
  const {parts, token: fromUrl} = parseHash();
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    history.replaceState(null, '', '#/' + parts.join('/'));
  }
  const main = document.getElementById('main');
  const login = document.getElementById('login');
  const who = document.getElementById('who');
  if (!token()) {
    login.hidden = false;
    who.replaceChildren();
    main.replaceChildren(el('p', {class: 'muted'}, 'Paste an API token to open the dashboard.'));
    return;
  }
  login.hidden = true;
  const out = el('button', {type: 'button', id: 'signout'}, 'Sign out');
  out.addEventListener('click', () => { sessionStorage.removeItem(TOKEN_KEY); render(); });
  who.replaceChildren(out);
  const page = PAGES[parts[0]] ? parts[0] : 'nodes';
  for (const a of document.querySelectorAll('header nav a')) {
    a.classList.toggle('active', a.id === `nav-${page}`);
  }
  document.body.dataset.page = page;
  try {
    main.replaceChildren(...await PAGES[page](parts[1]));
    document.body.dataset.loaded = page;
  } catch (e) {
    main.replaceChildren(el('p', {class: 'error', id: 'error'}, e.message));
    if (e.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      login.hidden = false;
    }
  }
}

document.getElementById('login').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const t = document.getElementById('token').value.trim();
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  document.getElementById('token').value = '';
  render();
});
window.addEventListener('hashchange', render);
render();
// Fresh data every 30 s while the tab is shown.
setInterval(() => { if (!document.hidden && token()) render(); }, 30000);
