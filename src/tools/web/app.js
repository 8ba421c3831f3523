// app.js - the page of `ard web`: the net (polled from /api/net once a second) and plots,
// each fed by its own WebSocket with min/max buckets decimated in the server.
'use strict';

// The token came in the address ard web printed; the server moved it into an HttpOnly
// cookie that every request of this page (fetch and WebSocket, same origin) carries.
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
  '#17becf'];
let allowSet = false;
let selectedConn = null;
let activePlot = null;
const plots = [];

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

function fmtRate(hz) {
  if (!(hz > 0)) return '-';
  if (hz >= 999.5) return (hz / 1000).toPrecision(3) + ' kHz';
  return hz.toPrecision(3) + ' Hz';
}

function fmtAge(ns) {
  if (ns < 0) return 'never';
  const s = ns / 1e9;
  if (s < 1e-3) return (s * 1e6).toFixed(0) + ' µs';
  if (s < 1) return (s * 1e3).toFixed(1) + ' ms';
  if (s < 120) return s.toFixed(1) + ' s';
  return (s / 60).toFixed(0) + ' min';
}

// ---- the net --------------------------------------------------------------------------------

let lastNet = null;
const openGroups = new Map();

function renderNet(net) {
  lastNet = net;
  document.getElementById('domain').textContent = net.domain;
  allowSet = net.allow_set;
  document.getElementById('setmode').textContent = allowSet ? 'setting allowed' : 'read-only';
  const filter = document.getElementById('filter').value.trim().toLowerCase();
  const groups = new Map();
  let shown = 0;
  for (const c of net.connections) {
    const peers = c.peers || [];
    const w = peers.find(p => p.dir === 'out');
    const readers = peers.filter(p => p.dir === 'in');
    for (const r of readers) if (r.pid === net.self) r.program = 'ard web';
    if (c.web_reads && !readers.some(r => r.pid === net.self))
      readers.push({program: 'ard web', pid: net.self});
    const text = [c.name, c.type || '', w ? w.program : '', ...readers.map(r => r.program)]
      .join(' ').toLowerCase();
    if (filter && !text.includes(filter)) continue;
    const key = w ? `${w.program} (${w.pid})` : '(no writer)';
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push({c, readers});
    shown++;
  }
  renderGraph(net, net.connections.filter(c => !filter || [...groups.values()].some(g =>
    g.some(r => r.c === c))));
  document.getElementById('netcount').textContent =
    `${shown} of ${net.connections.length} connections`;
  const list = document.getElementById('netlist');
  const keys = [...groups.keys()].sort((a, b) => (a === '(no writer)') - (b === '(no writer)') ||
    a.localeCompare(b));
  const frag = document.createDocumentFragment();
  for (const key of keys) {
    const rows = groups.get(key).sort((a, b) => a.c.name.localeCompare(b.c.name));
    const det = el('details', {class: 'group'});
    det.open = openGroups.has(key) ? openGroups.get(key) : true;
    det.addEventListener('toggle', () => openGroups.set(key, det.open));
    const nstale = rows.filter(r => r.c.stale).length;
    det.append(el('summary', {}, `${key} → ${rows.length} connection${rows.length > 1 ? 's' : ''}`,
      nstale ? ` · ${nstale} stale` : ''));
    const tb = el('table', {class: 'conns'});
    for (const {c, readers} of rows) {
      const tr = el('tr', {class: 'conn' + (c.stale ? ' stale' : '') +
        (c.name === selectedConn ? ' selected' : ''), 'data-conn': c.name});
      const name = el('td', {class: 'name'}, c.name);
      if (c.stale) name.append(' ', el('span', {class: 'stale-tag'}, c.damaged ? 'damaged' :
        c.orphaned ? 'orphaned' : 'stale'));
      tr.append(name, el('td', {class: 'type', title: c.type || ''}, c.type || '(opaque)'),
        el('td', {class: 'num rate'}, fmtRate(c.rate_hz)),
        el('td', {class: 'num age'}, c.damaged ? '' : fmtAge(c.age_ns)),
        el('td', {class: 'readers'}, readers.length ? '→ ' + readers.map(r =>
          `${r.program} (${r.pid})`).join(', ') + (c.unlisted ? ` and ${c.unlisted} more` : '')
          : 'no readers'));
      tr.addEventListener('click', () => pick(c.name));
      tb.append(tr);
    }
    det.append(tb);
    frag.append(det);
  }
  const top = list.scrollTop;
  list.replaceChildren(frag);
  list.scrollTop = top;
}

// ---- the net as a graph (small nets): layered left to right, cycles drawn as arcs below -------

const SVG = 'http://www.w3.org/2000/svg';
function sv(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function renderGraph(net, conns) {
  const box = document.getElementById('graph');
  if (!document.getElementById('showgraph').checked || conns.length === 0 || conns.length > 30) {
    box.replaceChildren();
    return;
  }
  const nodes = new Map(), edges = [];
  const node = (id, n) => { if (!nodes.has(id)) nodes.set(id, {id, out: [], in: [], ...n}); return nodes.get(id); };
  for (const c of conns) {
    node('c:' + c.name, {kind: 'conn', c});
    for (const p of c.peers || []) {
      if (p.pid === net.self) continue;
      node('p' + p.pid, {kind: 'proc', p});
      edges.push(p.dir === 'out' ? ['p' + p.pid, 'c:' + c.name] : ['c:' + c.name, 'p' + p.pid]);
    }
  }
  for (const [a, b] of edges) { nodes.get(a).out.push(b); nodes.get(b).in.push(a); }
  // Depth-first from the sources: an edge to a node on the stack closes a cycle (drawn back).
  const state = new Map(), back = new Set(), order = [];
  const visit = id => {
    state.set(id, 1);
    for (const t of nodes.get(id).out) {
      if (state.get(t) === 1) back.add(id + '>' + t);
      else if (!state.has(t)) visit(t);
    }
    state.set(id, 2);
    order.push(id);
  };
  const ids = [...nodes.keys()].sort();
  for (const id of ids) if (nodes.get(id).in.length === 0 && !state.has(id)) visit(id);
  for (const id of ids) if (!state.has(id)) visit(id);
  order.reverse();
  const layer = new Map();
  for (const id of order) {
    let l = 0;
    for (const f of nodes.get(id).in) if (!back.has(f + '>' + id)) l = Math.max(l, layer.get(f) + 1);
    layer.set(id, l);
  }
  const cols = [];
  for (const id of order) (cols[layer.get(id)] = cols[layer.get(id)] || []).push(id);
  // Layers top to bottom, nodes of a layer side by side, ordered under their predecessors.
  const pos = new Map(), NW = 118, CW = NW + 22, RH = 52;
  cols.forEach((col, l) => {
    if (l > 0) {
      const bary = id => {
        const xs = nodes.get(id).in.filter(f => pos.has(f)).map(f => pos.get(f).x);
        return xs.length ? xs.reduce((a, b) => a + b) / xs.length : 1e9;
      };
      col.sort((a, b) => bary(a) - bary(b));
    }
    col.forEach((id, i) => pos.set(id, {x: 34 + i * CW, y: 22 + l * RH}));
  });
  const W = Math.max(...cols.map(c => c.length)) * CW + 74, H = cols.length * RH + 6;
  const svg = sv('svg', {width: W, height: H, viewBox: `0 0 ${W} ${H}`});
  const defs = sv('defs');
  const mk = sv('marker', {id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7,
    markerHeight: 7, orient: 'auto-start-reverse'});
  mk.append(sv('path', {d: 'M0,0 L10,5 L0,10 z', fill: '#7a8496'}));
  defs.append(mk);
  svg.append(defs);
  for (const [a, b] of edges) {
    const p = pos.get(a), q = pos.get(b), pc = p.x + NW / 2, qc = q.x + NW / 2;
    let d;
    if (back.has(a + '>' + b) || q.y <= p.y) {
      // A cycle closes: around the right-hand side, upwards.
      const r = W - 8;
      d = `M${p.x + NW},${p.y} C${r},${p.y} ${r},${q.y} ${q.x + NW},${q.y}`;
    } else if (q.y - p.y > RH * 1.5) {
      // Past other layers: around the left-hand side, downwards.
      d = `M${p.x},${p.y} C${p.x - 30},${p.y} ${q.x - 30},${q.y} ${q.x},${q.y}`;
    } else d = `M${pc},${p.y + 15} C${pc},${p.y + 36} ${qc},${q.y - 36} ${qc},${q.y - 15}`;
    svg.append(sv('path', {class: 'edge', d, 'marker-end': 'url(#arrow)', 'data-edge': `${a} ${b}`}));
  }
  for (const [id, n] of nodes) {
    const {x, y} = pos.get(id);
    if (n.kind === 'proc') {
      const g = sv('g', {class: 'proc', 'data-node': id});
      g.append(sv('rect', {x, y: y - 14, width: NW, height: 28, rx: 3}),
        sv('text', {x: x + 6, y: y - 1}, n.p.program),
        sv('text', {x: x + 6, y: y + 10, class: 'sub'}, String(n.p.pid)));
      svg.append(g);
    } else {
      const c = n.c;
      const g = sv('g', {class: 'conn' + (c.stale ? ' stale' : '') +
        (c.name === selectedConn ? ' selected' : ''), 'data-node': id});
      g.append(sv('ellipse', {cx: x + NW / 2, cy: y, rx: NW / 2, ry: 15}),
        sv('text', {x: x + NW / 2, y: y - 1, 'text-anchor': 'middle'}, c.name),
        sv('text', {x: x + NW / 2, y: y + 10, 'text-anchor': 'middle', class: 'sub'},
          c.stale ? 'stale' : fmtRate(c.rate_hz)));
      g.addEventListener('click', () => pick(c.name));
      svg.append(g);
    }
  }
  box.replaceChildren(svg);
}

async function pollNet() {
  try {
    const r = await fetch('/api/net', {cache: 'no-store'});
    if (!r.ok) throw new Error((await r.json()).error || r.statusText);
    renderNet(await r.json());
    setStatus('live', false);
  } catch (e) {
    setStatus('server unreachable: ' + e.message, true);
  }
}

function setStatus(text, bad) {
  const s = document.getElementById('status');
  s.textContent = text;
  s.className = bad ? 'err' : 'muted';
}

function pick(name) {
  selectedConn = name;
  if (!activePlot) activePlot = addPlot();
  activePlot.setConn(name);
  if (lastNet) renderNet(lastNet);
}

// ---- plots ------------------------------------------------------------------------------------

class Plot {
  constructor() {
    this.conn = null;
    this.type = null;
    this.chosen = [];
    this.rows = [];
    this.win = 5;
    this.paused = false;
    this.frozenT = 0;
    this.serverNow = 0;
    this.recvAt = 0;
    this.frames = 0;
    this.dirty = false;
    this.ws = null;
    this.build();
    this.connect();
  }

  build() {
    const winSel = el('select', {class: 'window', onchange: () => {
      this.win = +winSel.value;
      this.resubscribe();
    }});
    for (const w of [1, 2, 5, 10, 30, 60])
      winSel.append(el('option', w === this.win ? {value: w, selected: ''} : {value: w}, `${w} s`));
    this.pauseBtn = el('button', {type: 'button', class: 'pause', onclick: () => this.togglePause()},
      'pause');
    this.auto = el('input', {type: 'checkbox', class: 'auto', checked: '', onchange: () =>
      this.dirty = true});
    this.ymin = el('input', {class: 'num ymin', value: '-1', onchange: () => this.dirty = true});
    this.ymax = el('input', {class: 'num ymax', value: '1', onchange: () => this.dirty = true});
    this.title = el('b', {class: 'pconn'}, 'click a connection');
    this.root = el('div', {class: 'plot'},
      el('div', {class: 'bar'}, this.title, 'window', winSel, this.pauseBtn,
        el('label', {}, this.auto, ' autoscale'), 'fixed', this.ymin, '…', this.ymax,
        el('button', {type: 'button', onclick: () => this.close()}, '×')));
    this.fieldsDiv = el('div', {class: 'fields'});
    this.canvas = el('canvas', {width: 900, height: 260});
    this.readout = el('div', {class: 'readout'}, ' ');
    this.stats = el('div', {class: 'stats'});
    this.value = el('pre', {class: 'value'});
    this.setDiv = el('div', {class: 'setbox'});
    this.root.append(this.fieldsDiv, this.canvas, this.readout, this.stats, this.value, this.setDiv);
    this.root.addEventListener('mousedown', () => activate(this));
    this.canvas.addEventListener('mousemove', e => this.cursor(e));
    this.canvas.addEventListener('mouseleave', () => { this.cursorX = null; this.dirty = true; });
    document.getElementById('plots').append(this.root);
  }

  connect() {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    this.ws = new WebSocket(`${proto}//${location.host}/ws`);
    this.ws.onopen = () => this.resubscribe();
    this.ws.onmessage = ev => this.message(JSON.parse(ev.data));
    this.ws.onclose = () => {
      if (this.closed) return;
      this.title.textContent = (this.conn || '') + ' (disconnected, retrying)';
      setTimeout(() => { if (!this.closed) this.connect(); }, 1000);
    };
  }

  bucketUs() {
    return Math.max(10, Math.round(this.win * 1e6 / this.canvas.width));
  }

  resubscribe() {
    // Buckets of the old selection may still be on their way: none is taken until the
    // server confirms the new one (it answers in order).
    this.plotted = null;
    this.rows = [];
    this.dirty = true;
    if (!this.conn || !this.ws || this.ws.readyState !== 1) return;
    this.ws.send(['sub', this.conn, this.bucketUs(), ...this.chosen].join(' '));
  }

  setConn(name) {
    if (name !== this.conn) this.chosen = [];
    this.conn = name;
    this.type = null;
    this.title.textContent = name;
    this.root.dataset.conn = name;
    this.resubscribe();
  }

  message(m) {
    if (m.error) {
      this.readout.textContent = m.error;
      this.readout.className = 'readout err';
      return;
    }
    if (m.sub !== undefined) {
      this.readout.className = 'readout';
      this.readout.textContent = ' ';
      if (!this.type || this.type.type !== m.type || this.type.name !== m.sub) {
        this.type = {name: m.sub, type: m.type, fields: m.fields};
        this.buildFields();
        this.buildSet();
        if (this.chosen.length === 0) {
          // Plot the first element of the first field by default.
          const first = this.elements()[0];
          if (first) { this.chosen = [first]; this.buildFields(); this.resubscribe(); }
        }
      }
      this.rows = [];
      this.plotted = m.plot;
      this.root.dataset.plotted = m.plot.join(' ');
      return;
    }
    if (m.now) { this.serverNow = m.now; this.recvAt = performance.now(); }
    if (m.b && m.b.length && this.plotted) {
      for (const r of m.b) this.rows.push(r);
      const keep = this.serverNow - 65;
      let i = 0;
      while (i < this.rows.length && this.rows[i][0] < keep) i++;
      if (i) this.rows.splice(0, i);
      this.dirty = true;
    }
    if (m.val && !this.paused) {
      this.value.textContent = `seq ${m.val.seq}  age ${fmtAge(m.val.age_ns)}\n` +
        Object.entries(m.val.fields).map(([k, v]) =>
          `${k} = ${Array.isArray(v) ? v.join(' ') : v}`).join('\n');
    }
  }

  elements() {
    const out = [];
    for (const f of this.type.fields) {
      if (f.count === 1) out.push(f.name);
      else for (let i = 0; i < Math.min(f.count, 64); i++) out.push(`${f.name}[${i}]`);
    }
    return out;
  }

  buildFields() {
    this.fieldsDiv.replaceChildren();
    if (!this.type) return;
    for (const name of this.elements()) {
      const cb = el('input', {type: 'checkbox', 'data-field': name});
      cb.checked = this.chosen.includes(name);
      cb.addEventListener('change', () => {
        if (cb.checked) {
          if (this.chosen.length >= 16) { cb.checked = false; return; }
          this.chosen.push(name);
        } else this.chosen = this.chosen.filter(n => n !== name);
        this.resubscribe();
      });
      this.fieldsDiv.append(el('label', {}, cb, name));
    }
  }

  buildSet() {
    this.setDiv.replaceChildren();
    if (!allowSet) {
      this.setDiv.append(el('span', {class: 'muted setoff'},
        'setting values is off (start ard web with --allow-set)'));
      return;
    }
    const form = el('form', {class: 'set'});
    for (const f of this.type.fields) {
      const inp = el('input', {name: f.name, placeholder: `${f.type}${f.count > 1 ? '[' + f.count +
        ']' : ''}`});
      form.append(el('label', {}, f.name + ' ', inp));
    }
    const msg = el('span', {class: 'setmsg'});
    form.append(el('button', {type: 'submit'}, 'set'), msg);
    form.addEventListener('submit', async e => {
      e.preventDefault();
      const body = new URLSearchParams();
      body.append('c', this.conn);
      for (const inp of form.querySelectorAll('input'))
        if (inp.value.trim() !== '') body.append('a', `${inp.name}=${inp.value.trim()}`);
      const r = await fetch('/api/set', {method: 'POST', body});
      const j = await r.json();
      msg.textContent = r.ok ? 'sent' : (j.message || j.error || r.statusText).trim();
      msg.className = r.ok ? 'setmsg' : 'setmsg err';
    });
    this.setDiv.append(form);
  }

  togglePause() {
    this.paused = !this.paused;
    this.frozenT = this.tNow(true);
    this.pauseBtn.textContent = this.paused ? 'resume' : 'pause';
    this.root.dataset.paused = this.paused;
    this.dirty = true;
  }

  tNow(live) {
    if (this.paused && !live) return this.frozenT;
    return this.serverNow + (performance.now() - this.recvAt) / 1000;
  }

  close() {
    this.closed = true;
    if (this.ws) this.ws.close();
    this.root.remove();
    plots.splice(plots.indexOf(this), 1);
    if (activePlot === this) activePlot = plots[plots.length - 1] || null;
    if (activePlot) activate(activePlot);
  }

  cursor(e) {
    const r = this.canvas.getBoundingClientRect();
    this.cursorX = (e.clientX - r.left) * this.canvas.width / r.width;
    this.dirty = true;
  }

  draw() {
    if (!this.dirty && this.paused) return;
    this.dirty = false;
    const cv = this.canvas, g = cv.getContext('2d');
    const W = cv.width, H = cv.height, L = 56, B = 18;
    const t1 = this.tNow(false), t0 = t1 - this.win;
    const n = this.plotted ? this.plotted.length : 0;
    const vis = this.rows.filter(r => r[0] >= t0 && r[0] <= t1);
    // Extremes of what is shown, per trace.
    const ext = [];
    for (let i = 0; i < n; i++) {
      let lo = Infinity, hi = -Infinity;
      for (const r of vis) {
        if (r[1 + 2 * i] !== null && r[1 + 2 * i] < lo) lo = r[1 + 2 * i];
        if (r[2 + 2 * i] !== null && r[2 + 2 * i] > hi) hi = r[2 + 2 * i];
      }
      ext.push([lo, hi]);
    }
    let ylo, yhi;
    if (this.auto.checked) {
      ylo = Math.min(...ext.map(e => e[0]));
      yhi = Math.max(...ext.map(e => e[1]));
      if (!isFinite(ylo) || !isFinite(yhi)) { ylo = -1; yhi = 1; }
      if (yhi - ylo < 1e-12) { ylo -= 0.5; yhi += 0.5; }
      const pad = (yhi - ylo) * 0.05;
      ylo -= pad; yhi += pad;
    } else {
      ylo = parseFloat(this.ymin.value); yhi = parseFloat(this.ymax.value);
      if (!(yhi > ylo)) { ylo = -1; yhi = 1; }
    }
    const X = t => L + (W - L) * (t - t0) / this.win;
    const Y = v => (H - B) * (1 - (v - ylo) / (yhi - ylo));
    g.clearRect(0, 0, W, H);
    g.font = '11px sans-serif';
    g.fillStyle = '#6b7485';
    g.strokeStyle = '#e6e8ec';
    g.lineWidth = 1;
    for (let k = 0; k <= 4; k++) {
      const v = ylo + (yhi - ylo) * k / 4, y = Y(v);
      g.beginPath(); g.moveTo(L, y); g.lineTo(W, y); g.stroke();
      g.fillText(v.toPrecision(4), 2, Math.min(H - B, Math.max(10, y + 4)));
    }
    const step = this.win <= 2 ? 0.25 : this.win <= 10 ? 1 : this.win <= 30 ? 5 : 10;
    for (let s = 0; s <= this.win + 1e-9; s += step) {
      const x = X(t1 - s);
      g.beginPath(); g.moveTo(x, 0); g.lineTo(x, H - B); g.stroke();
      g.fillText(`-${+s.toFixed(2)} s`, Math.max(L, x - 14), H - 4);
    }
    const bw = Math.max(1, (W - L) * this.bucketUs() * 1e-6 / this.win);
    g.save();
    g.beginPath(); g.rect(L, 0, W - L, H - B); g.clip();
    for (let i = 0; i < n; i++) {
      g.fillStyle = g.strokeStyle = COLORS[i % COLORS.length];
      g.beginPath();
      let prev = null;
      for (const r of vis) {
        const lo = r[1 + 2 * i], hi = r[2 + 2 * i];
        if (lo === null || hi === null) { prev = null; continue; }
        const x = X(r[0]);
        // Connect to the previous bucket, then its own min..max: the true envelope.
        if (prev !== null) g.lineTo(x, Y(prev)); else g.moveTo(x, Y(lo));
        g.lineTo(x, Y(lo)); g.lineTo(x, Y(hi));
        g.fillRect(x, Y(hi), bw, Math.max(1, Y(lo) - Y(hi)));
        prev = hi;
        g.moveTo(x, Y(hi));
      }
      g.stroke();
    }
    g.restore();
    // Stats of what is shown (also what the tests read).
    this.stats.replaceChildren();
    for (let i = 0; i < n; i++) {
      const s = el('span', {'data-trace': this.plotted[i], 'data-min': ext[i][0],
        'data-max': ext[i][1]});
      s.style.color = COLORS[i % COLORS.length];
      s.textContent = `${this.plotted[i]}: ${isFinite(ext[i][0]) ? ext[i][0].toPrecision(5) : '-'}` +
        ` … ${isFinite(ext[i][1]) ? ext[i][1].toPrecision(5) : '-'}`;
      this.stats.append(s);
    }
    if (this.cursorX != null && this.cursorX >= L) {
      const t = t0 + (this.cursorX - L) / (W - L) * this.win;
      g.strokeStyle = '#444';
      g.beginPath(); g.moveTo(this.cursorX, 0); g.lineTo(this.cursorX, H - B); g.stroke();
      let best = null;
      for (const r of vis) if (!best || Math.abs(r[0] - t) < Math.abs(best[0] - t)) best = r;
      const parts = [`t = ${(t - t1).toFixed(4)} s`];
      if (best) for (let i = 0; i < n; i++) {
        const lo = best[1 + 2 * i], hi = best[2 + 2 * i];
        parts.push(`${this.plotted[i]} = ${lo === hi ? lo : `${lo} … ${hi}`}`);
      }
      this.readout.textContent = parts.join('   ');
    }
    this.frames++;
    this.root.dataset.ylo = ylo;
    this.root.dataset.yhi = yhi;
    this.root.dataset.frames = this.frames;
    this.root.dataset.t1 = t1;
  }
}

function activate(p) {
  activePlot = p;
  for (const q of plots) q.root.classList.toggle('active', q === p);
}

function addPlot() {
  const p = new Plot();
  plots.push(p);
  activate(p);
  return p;
}

let lastFrame = 0;
function frame(ts) {
  if (ts - lastFrame >= 32) {
    lastFrame = ts;
    for (const p of plots) if (p.conn) p.draw();
  }
  requestAnimationFrame(frame);
}

document.getElementById('addplot').addEventListener('click', () => addPlot());
document.getElementById('filter').addEventListener('input', () => lastNet && renderNet(lastNet));
document.getElementById('showgraph').addEventListener('change', () => lastNet && renderNet(lastNet));
pollNet();
setInterval(pollNet, 1000);
requestAnimationFrame(frame);
