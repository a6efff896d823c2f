/*
 * app.js - PerfDisplay: renders a PerfTracker report.json as the page people
 * read when a job is slow.  Inlined into DIR/PerfDisplay/index.html with the
 * charting library (ECharts) by the build (web/inline.c, src/report/page.c).
 *
 * Data: the report is embedded in <script id="pt-report">; when that block
 * is empty (page served next to report.json) it is fetched.  The five seed
 * sections, "workers", "findings" and "Hang" are read as written by
 * `perftracker diagnose`; the optional "display" key (docs/display.md) adds
 * per-step times, class breakdowns and the heatmap matrix.  Without it the
 * page falls back to what the sections carry.
 *
 * Safety: every name from the report (kernels, Python frames, workers) is
 * put in the DOM as text (textContent / setAttribute), never as markup;
 * chart tooltips are HTML, so they go through esc().
 */
(function () {
  'use strict';

  var t0 = performance.now();
  var CLASSES = ['compute', 'communication', 'memory', 'runtime', 'python', 'idle'];
  var CLASS_COLOR = { compute: '#4e79a7', communication: '#f28e2b', memory: '#59a14f',
    runtime: '#e15759', python: '#b07aa1', idle: '#bab0ac' };
  var SECTION = { compute: 'GPU Compute', memory: 'GPU memory operations', communication: 'Communication',
    runtime: 'CUDA Runtime', python: 'Python functions' };
  var K_UTIL = 'min/median/max GPU utilization (in [0,1])';
  var K_CUTIL = 'min/median/max GPU compute utilization (in [0,1])';
  var K_ABN_UTIL = 'workers with abnormal GPU utilization';
  var K_MAJOR = 'major_kernel_executions';
  var K_ISSUES = 'workers with potential GPU issues';
  var K_DETAIL = 'detailed report';
  var K_MED_COST = 'median cost per execution (ms)';
  var K_OTHERS = 'median of other workers (ms)';
  var K_BN = 'bottleneck ratio (in [0,1])';
  var K_AVG_BN = 'avg bottleneck ratio (in [0,1])';
  var K_AVG_EXEC = 'avg execution time / monitoring duration (in [0,1])';

  /* ---------------------------------------------------------------- DOM */
  function h(tag, attrs) {
    var el = document.createElement(tag);
    var k, v, i;
    if (attrs) {
      for (k in attrs) {
        v = attrs[k];
        if (v == null || v === false) continue;
        if (k === 'class') el.className = v;
        else if (k === 'text') el.textContent = v;
        else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), v);
        else if (k === 'style') el.style.cssText = v;
        else el.setAttribute(k, v === true ? '' : v);
      }
    }
    for (i = 2; i < arguments.length; i++) add(el, arguments[i]);
    return el;
  }
  function add(el, c) {
    var i;
    if (c == null || c === false) return;
    if (Array.isArray(c)) { for (i = 0; i < c.length; i++) add(el, c[i]); return; }
    el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  var ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return ESC[c]; }); }

  /* ------------------------------------------------------------ numbers */
  function isNum(x) { return typeof x === 'number' && isFinite(x); }
  function pct(x, d) { return isNum(x) ? (x * 100).toFixed(d == null ? (Math.abs(x) < 0.1 ? 2 : 1) : d) + '%' : '–'; }
  /* three significant digits (the text report's rule) */
  function sig3(x) { var a = Math.abs(x); return a >= 99.95 ? x.toFixed(0) : a >= 9.995 ? x.toFixed(1) : x.toFixed(2); }
  function ms(x) {
    if (!isNum(x)) return '–';
    var a = Math.abs(x);
    if (x === 0) return '0 ms';
    if (a >= 1000) return a >= 99950 ? x.toFixed(0) + ' ms' : sig3(x / 1000) + ' s';
    if (a >= 0.9995) return sig3(x) + ' ms';
    if (a >= 0.0009995) return sig3(x * 1000) + ' µs';
    return sig3(x * 1e6) + ' ns';
  }
  /* a report key as a column label: no "(in [0,1])" (the cells say %) */
  function lbl(k) { return String(k).replace(/ \(in \[0,1\]\)/g, ''); }
  function num(x) {
    if (!isNum(x)) return x == null ? '–' : String(x);
    var a = Math.abs(x);
    if (a !== 0 && (a < 0.001 || a >= 1e7)) return x.toExponential(2);
    return a >= 100 ? x.toFixed(1) : a >= 1 ? x.toFixed(3) : x.toFixed(4);
  }
  function signedPct(x) { return isNum(x) ? (x >= 0 ? '+' : '') + (x * 100).toFixed(0) + '%' : '–'; }
  function median(xs) {
    var a = xs.filter(isNum).sort(function (p, q) { return p - q; });
    var n = a.length;
    if (!n) return NaN;
    return n % 2 ? a[(n - 1) >> 1] : (a[n / 2 - 1] + a[n / 2]) / 2;
  }
  function mad(xs, m) { return median(xs.map(function (x) { return Math.abs(x - m); })); }
  function plural(n, one, many) { return n + ' ' + (n === 1 ? one : (many || one + 's')); }
  function obj(x) { return x && typeof x === 'object' && !Array.isArray(x) ? x : null; }
  function keys(o) { return o ? Object.keys(o) : []; }

  /* ------------------------------------------------------------- model */
  var M = null;         // normalised report
  var charts = [];      // live chart instances (resized with the window)

  function buildModel(rep) {
    var m = { rep: rep, workers: [], byId: Object.create(null), findings: [], hasDisplay: false };
    var disp = obj(rep.display) || {};
    var dw = obj(disp.workers) || {};
    var wr = obj(rep.workers) || {};
    m.hasDisplay = !!obj(rep.display);
    function ensure(id) {
      var w = m.byId[id];
      if (!w) {
        w = { id: id, rank: null, host: '', pid: null, file: '', steps: null, window: null, util: null,
          error: null, stepMs: null, classMs: null, flags: [] };
        m.byId[id] = w;
        m.workers.push(w);
      }
      return w;
    }
    keys(wr).forEach(function (id) {
      var r = obj(wr[id]) || {};
      var w = ensure(id);
      w.rank = isNum(r.rank) ? r.rank : null;
      w.host = r.host || '';
      w.pid = isNum(r.pid) ? r.pid : null;
      w.file = r.file || '';
      /* "steps": a count, or the list of profiled step numbers */
      w.steps = isNum(r.steps) ? r.steps : Array.isArray(r.steps) ? r.steps.length : null;
      w.stepNumbers = Array.isArray(r.steps) ? r.steps : null;
      w.window = isNum(r['window (ms)']) ? r['window (ms)'] : null;
      w.util = isNum(r['gpu utilization']) ? r['gpu utilization'] : null;
      w.error = r.error || null;
    });
    keys(dw).forEach(function (id) {
      var d = obj(dw[id]) || {};
      var w = ensure(id);
      if (Array.isArray(d.step_ms)) w.stepMs = d.step_ms.filter(isNum);
      if (obj(d.class_ms)) w.classMs = d.class_ms;
      if (Array.isArray(d.step_numbers)) w.stepNumbers = d.step_numbers;
    });
    var gc = obj(rep['GPU Compute']) || {};
    keys(obj(gc[K_ABN_UTIL])).forEach(function (id) {
      var w = ensure(id);
      if (w.util == null && isNum(gc[K_ABN_UTIL][id])) w.util = gc[K_ABN_UTIL][id];
    });
    m.workers.sort(function (a, b) {
      if (a.rank != null && b.rank != null && a.rank !== b.rank) return a.rank - b.rank;
      if ((a.rank == null) !== (b.rank == null)) return a.rank == null ? 1 : -1;
      return collator.compare(a.id, b.id);
    });
    m.workers.forEach(function (w, i) { w.index = i; });

    /* step time: per-step list when the display key has it, else window / steps */
    m.stepExact = false;
    m.workers.forEach(function (w) {
      if (w.stepMs && w.stepMs.length) { w.step = median(w.stepMs); m.stepExact = true; }
      else if (isNum(w.window) && w.steps > 0) w.step = w.window / w.steps;
      else w.step = null;
    });
    var steps = m.workers.map(function (w) { return w.step; }).filter(isNum);
    m.stepMedian = median(steps);
    var smad = mad(steps, m.stepMedian);
    /* Slow-step outliers: robust z > 3 and at least 5% slower than the median,
       so a tight cluster with a tiny MAD does not flag noise. */
    var lim = m.stepMedian + Math.max(3 * 1.4826 * smad, 0.05 * m.stepMedian);
    m.workers.forEach(function (w) { w.slowStep = isNum(w.step) && w.step > lim; });
    m.stepLimit = lim;

    m.abnUtil = obj(gc[K_ABN_UTIL]) || {};
    m.utilMedian = median(m.workers.map(function (w) { return w.util; }));

    m.findings = (Array.isArray(rep.findings) ? rep.findings : []).filter(obj).slice();
    m.findings.sort(function (a, b) { return (isNum(a.rank) ? a.rank : 1e9) - (isNum(b.rank) ? b.rank : 1e9); });
    m.findings.forEach(function (f) {
      (Array.isArray(f.workers) ? f.workers : []).forEach(function (id) {
        var w = m.byId[id];
        if (w && w.flags.indexOf(f) < 0) w.flags.push(f);
      });
    });
    m.hang = obj(rep.Hang);
    m.errors = m.workers.filter(function (w) { return w.error; });
    m.heat = buildHeat(rep, m);
    var all = [];
    var addKeys = function (o) { keys(obj(o)).forEach(function (k) { all.push(k); }); };
    addKeys(gc[K_MAJOR]);
    keys(obj(gc[K_DETAIL])).forEach(function (w) { addKeys(gc[K_DETAIL][w]); });
    addKeys(rep['GPU memory operations']); addKeys(rep['CUDA Runtime']); addKeys(rep['Python functions']);
    keys(obj(rep.Communication)).forEach(function (g) { addKeys(rep.Communication[g]); });
    m.heat.funcs.forEach(function (f) { all.push(f.key); });
    m.findings.forEach(function (f) { if (f['function']) all.push(String(f['function'])); });
    var cpw = obj(obj(rep['Critical path']) && rep['Critical path'].workers) || {};
    keys(cpw).forEach(function (id) {
      var st = obj(cpw[id]) && cpw[id].steps;
      (Array.isArray(st) ? st : []).forEach(function (x) {
        var fs = obj(x) && x.functions;
        (Array.isArray(fs) ? fs : []).forEach(function (f) { if (obj(f) && f.name != null) all.push(String(f.name)); });
      });
    });
    var seen = Object.create(null);
    m.short = shortNames(all.filter(function (k) { if (seen[k]) return false; seen[k] = 1; return true; }));
    return m;
  }

  /* The heatmap matrix: display.heatmap when present, else what the sections
     list per worker (values only known above the sections' thresholds). */
  function buildHeat(rep, m) {
    var hm = obj(obj(rep.display) && rep.display.heatmap);
    var funcs = [], rows = [], vals = [], exact = false, metric = '';
    if (hm && Array.isArray(hm.functions) && Array.isArray(hm.workers) && Array.isArray(hm.value)) {
      funcs = hm.functions.map(function (f) {
        return typeof f === 'string' ? { key: f, cls: '' } : { key: String(f.key), cls: f['class'] || '' };
      });
      rows = hm.workers.map(String);
      vals = hm.value;
      exact = true;
      metric = hm.metric || 'value';
    } else {
      var cols = Object.create(null);
      var col = function (key, cls) {
        if (!(key in cols)) { cols[key] = funcs.length; funcs.push({ key: key, cls: cls }); }
        return cols[key];
      };
      var cells = [];
      var put = function (wid, key, cls, v) { if (isNum(v)) cells.push([wid, col(key, cls), v]); };
      var gc = obj(rep['GPU Compute']) || {};
      var det = obj(gc[K_DETAIL]) || {};
      keys(det).forEach(function (wid) {
        keys(obj(det[wid])).forEach(function (k) {
          var r = obj(det[wid][k]) || {};
          if (isNum(r[K_MED_COST]) && isNum(r[K_OTHERS]) && r[K_OTHERS] > 0)
            put(wid, k, 'compute', r[K_BN] != null ? r[K_BN] : null);
        });
      });
      [['GPU memory operations', 'memory'], ['CUDA Runtime', 'runtime']].forEach(function (p) {
        var sec = obj(rep[p[0]]) || {};
        keys(sec).forEach(function (op) {
          var ab = obj(obj(sec[op]) && sec[op].abnormal_workers) || {};
          keys(ab).forEach(function (wid) { put(wid, op, p[1], ab[wid]); });
        });
      });
      var py = obj(rep['Python functions']) || {};
      keys(py).forEach(function (st) {
        var ws = obj(py[st]) || {};
        keys(ws).forEach(function (wid) { put(wid, st, 'python', ws[wid]); });
      });
      rows = m.workers.map(function (w) { return w.id; });
      var ri = Object.create(null);
      rows.forEach(function (id, i) { ri[id] = i; });
      vals = rows.map(function () { return new Array(funcs.length).fill(null); });
      cells.forEach(function (c) { if (c[0] in ri) vals[ri[c[0]]][c[1]] = c[2]; });
      metric = 'bottleneck ratio as listed in the sections';
    }
    /* relative deviation of each cell from its column's median */
    var nf = funcs.length;
    var med = new Array(nf);
    var j, i;
    for (j = 0; j < nf; j++) {
      var colv = [];
      for (i = 0; i < vals.length; i++) if (vals[i] && isNum(vals[i][j])) colv.push(vals[i][j]);
      med[j] = median(colv);
    }
    return { funcs: funcs, rows: rows, vals: vals, med: med, exact: exact, metric: metric };
  }

  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

  /* ------------------------------------------------------------ widgets */
  /* Short function names (src/report/names.c has the same rules): C++ names
     lose namespaces, template arguments and parameters; stacks read leaf
     first; names that would then read the same get back the word where they
     differ, then their launch shape. */
  var SHAPE = /\d+_\d+_\d+\|\d+_\d+_\d+$/;
  function stripShape(k) { var m = SHAPE.exec(k); return m ? k.slice(0, m.index) : k; }
  function isIdent(c) { return /[A-Za-z0-9_]/.test(c || ''); }
  function shortCxx(s) {
    var out = '', i = 0, n = s.length;
    while (i < n) {
      var c = s[i];
      if (c === ':' && s[i + 1] === ':' && i + 2 < n) { out = ''; i += 2; continue; }
      if (s.substr(i, 21) === '(anonymous namespace)') { i += 21; continue; }
      if (c === '(' && s[i + 1] === ')') { out += '()'; i += 2; continue; }
      if ((c === '<' || c === '(') && i > 0 && (isIdent(s[i - 1]) || s[i - 1] === '>')) {
        if (c === '(') break;
        out += '<…>';
        var d = 0;
        for (; i < n; i++) {
          var ch = s[i];
          if ('<({['.indexOf(ch) >= 0) d++;
          else if ('>)}]'.indexOf(ch) >= 0 && !(ch === '>' && s[i - 1] === '-') && --d === 0) { i++; break; }
        }
        continue;
      }
      out += c; i++;
    }
    return out;
  }
  function shortOne(key) {
    key = String(key);
    var base = stripShape(key);
    if (base === key && isStack(key))
      return key.split('|').reverse().map(function (f) { return f.replace(/^[^:]*\/([^/:]*: )/, '$1'); }).join(' ← ');
    if (base.slice(0, 5) === 'void ') base = base.slice(5);
    var r = /[<(]/.test(base) ? shortCxx(base) : base;
    return r || key;
  }
  /* The word of key k (shape left out) where it leaves its closest neighbour
     in the sorted list g (identifier characters around that offset). */
  function wordAt(k, d) {
    var m = k.length, a = d;
    while (a < m && !isIdent(k[a])) a++;
    if (a === m) a = d;
    while (a > 0 && isIdent(k[a - 1])) a--;
    var b = a; while (b < m && isIdent(k[b])) b++;
    return k.slice(a, b > a ? b : a + 1);
  }
  function splitWords(g) {   // g: distinct strings, sorted; -> word per string
    var lcp = function (a, b) { var j = 0; while (j < a.length && a[j] === b[j]) j++; return j; };
    var w = Object.create(null);
    g.forEach(function (k, i) {
      var d = Math.max(i > 0 ? lcp(g[i - 1], k) : 0, i + 1 < g.length ? lcp(k, g[i + 1]) : 0);
      w[k] = wordAt(k, d);
    });
    return w;
  }
  function groups(list, lab) {
    var by = Object.create(null);
    list.forEach(function (k) { (by[lab[k]] = by[lab[k]] || []).push(k); });
    return Object.keys(by).map(function (x) { return by[x]; }).filter(function (g) { return g.length > 1; });
  }
  function shortNames(list) {
    var out = Object.create(null);
    list.forEach(function (k) { out[k] = shortOne(k); });
    /* 1: the word where the names (launch shapes left out) differ */
    groups(list, out).forEach(function (g) {
      var names = g.map(stripShape).filter(function (x, i, a) { return a.indexOf(x) === i; }).sort();
      if (names.length < 2) return;
      var w = splitWords(names);
      g.forEach(function (k) {
        var s2 = out[k], word = w[stripShape(k)];
        out[k] = s2.indexOf('<…>') >= 0 ? s2.replace('<…>', '<…' + word + '…>') : s2 + ' [' + word + ']';
      });
    });
    /* 2: a further word, or the launch shape when only that differs */
    groups(list, out).forEach(function (g) {
      var names = g.map(stripShape).filter(function (x, i, a) { return a.indexOf(x) === i; }).sort();
      var w = names.length > 1 ? splitWords(names) : null;
      g.forEach(function (k) {
        var sh = k.slice(stripShape(k).length);
        out[k] += ' [' + (w && names.length === g.length ? w[stripShape(k)] : sh || w && w[stripShape(k)] || '') + ']';
      });
    });
    /* 3: still the same: numbered */
    groups(list, out).forEach(function (g) { g.sort().forEach(function (k, i) { out[k] += ' #' + (i + 1); }); });
    return out;
  }
  function shortName(k) { return (M && M.short && M.short[k]) || shortOne(k); }
  function workerLabel(w) { return w && w.rank != null ? 'rank ' + w.rank : (w ? w.id : ''); }
  /* A link to a worker's page; byRank: named "rank N" when its rank is known
     (narrow table columns), the id in the tooltip. */
  function workerLink(id, cls, byRank) {
    var w = byRank ? M.byId[id] : null;
    return h('a', { class: 'chip' + (cls ? ' ' + cls : ''), href: '#worker/' + encodeURIComponent(id), title: id,
      text: w && w.rank != null ? 'rank ' + w.rank : id });
  }
  /* A function name, shortened to one line (shortName); click shows it
     whole.  Python stacks ("a|b|c") read deepest frame first, since that is
     the function that owns the time. */
  function isStack(name) {
    var i = name.lastIndexOf('|');
    return i > 0 && !/^\d+_\d+_\d+$/.test(name.slice(i + 1));
  }
  function fnName(name) {
    name = String(name);
    var stack = isStack(name);
    var fr = stack ? name.split('|') : null;
    var short = shortName(name);
    var s = h('span', { class: 'fn', title: stack ? fr.join('\n') : name, text: short });
    s.addEventListener('click', function () {
      var open = s.classList.toggle('open');
      s.textContent = open && stack ? fr.join('\n') : open ? name : short;
    });
    return s;
  }
  function howto(title, items) {
    var dl = h('dl');
    items.forEach(function (it) { add(dl, [h('dt', { text: it[0] }), h('dd', { text: it[1] })]); });
    return h('details', { class: 'howto', open: true }, h('summary', { text: 'How to read ' + title }), dl);
  }
  function stat(k, v, d) { return h('div', { class: 'stat' }, h('div', { class: 'k', text: k }), h('div', { class: 'v', text: v }), d ? h('div', { class: 'd', text: d }) : null); }
  function empty(text) { return h('div', { class: 'empty', text: text }); }

  /* A sortable, filterable table.  cols: {key, label, num, fmt(v,row)->string|Node,
     get(row)->sort value, title}.  Rows are drawn a page at a time so that
     tables with tens of thousands of rows stay cheap. */
  function table(opt) {
    var cols = opt.cols, all = opt.rows, page = opt.page || 100;
    var sortKey = opt.sort ? opt.sort[0] : null, sortDir = opt.sort ? opt.sort[1] : 1;
    var shown = page, view = all.slice(), q = '';
    var colBy = {};
    cols.forEach(function (c) { colBy[c.key] = c; });
    var hay = all.map(function (r) {
      return cols.map(function (c) { var v = c.get ? c.get(r) : r[c.key]; return typeof v === 'string' ? v : ''; })
        .join('\u0001').toLowerCase();
    });
    var tbody = h('tbody');
    var count = h('span', { class: 'tbl-count' });
    var more = h('div', { class: 'tbl-more' });
    var ths = [];
    var thead = h('tr');
    cols.forEach(function (c) {
      var arrow = h('span', { class: 'arrow', 'aria-hidden': 'true' });
      var th = h('th', { class: c.num ? 'num' : null, scope: 'col', title: c.title || null, 'data-key': c.key },
        h('button', { type: 'button', onclick: function () { sortBy(c.key); } }, c.label, arrow));
      th._arrow = arrow;
      ths.push(th);
      thead.appendChild(th);
    });
    var input = h('input', { type: 'search', placeholder: opt.placeholder || 'Filter…', 'aria-label': 'Filter ' + (opt.title || 'table') });
    var timer = 0;
    input.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () { setFilter(input.value); }, 120);
    });
    var wrap = h('div', { class: 'tbl-wrap' + (opt.cls ? ' ' + opt.cls : '') },
      h('div', { class: 'tbl-bar' }, opt.title ? h('span', { class: 'tbl-title', text: opt.title }) : null, input, count),
      h('div', { class: 'tbl-scroll' }, h('table', { class: 'tbl' }, h('thead', null, thead), tbody)), more);
    function val(r, k) { var c = colBy[k]; return c.get ? c.get(r) : r[k]; }
    function apply() {
      var idx = [];
      var i;
      for (i = 0; i < all.length; i++) if (!q || hay[i].indexOf(q) >= 0) idx.push(i);
      if (sortKey) {
        var c = colBy[sortKey];
        idx.sort(function (a, b) {
          var x = val(all[a], sortKey), y = val(all[b], sortKey), r;
          var nx = x == null || (typeof x === 'number' && !isFinite(x)), ny = y == null || (typeof y === 'number' && !isFinite(y));
          if (nx || ny) return nx === ny ? a - b : nx ? 1 : -1;   // missing values last either way
          if (c.num) r = x - y; else r = collator.compare(String(x), String(y));
          return r ? r * sortDir : a - b;
        });
      }
      view = idx.map(function (i2) { return all[i2]; });
      shown = page;
      ths.forEach(function (th) {
        var k = th.getAttribute('data-key');
        th.setAttribute('aria-sort', k === sortKey ? (sortDir > 0 ? 'ascending' : 'descending') : 'none');
        th._arrow.textContent = k === sortKey ? (sortDir > 0 ? '▲' : '▼') : '';
      });
      draw();
    }
    function draw() {
      tbody.textContent = '';
      more.textContent = '';
      var n = Math.min(shown, view.length), i;
      var frag = document.createDocumentFragment();
      for (i = 0; i < n; i++) {
        var r = view[i];
        var tr = h('tr', opt.rowClass ? { class: opt.rowClass(r) } : null);
        for (var j = 0; j < cols.length; j++) {
          var c = cols[j];
          var v = c.get ? c.get(r) : r[c.key];
          var out = c.fmt ? c.fmt(v, r) : (c.num ? num(v) : v);
          tr.appendChild(h('td', { class: c.num ? 'num' : null }, out));
        }
        frag.appendChild(tr);
      }
      tbody.appendChild(frag);
      if (!view.length) tbody.appendChild(h('tr', null, h('td', { colspan: cols.length, class: 'empty', text: all.length ? 'No row matches the filter.' : (opt.empty || 'Nothing to show.') })));
      count.textContent = (view.length === all.length ? plural(all.length, 'row') : view.length + ' of ' + all.length + ' rows') +
        (n < view.length ? ' (showing ' + n + ')' : '');
      if (n < view.length) {
        add(more, [h('button', { type: 'button', onclick: function () { shown += page * 5; draw(); }, text: 'Show ' + Math.min(page * 5, view.length - n) + ' more' }), ' ',
          h('button', { type: 'button', onclick: function () { shown = view.length; draw(); }, text: 'Show all ' + view.length })]);
      }
    }
    function sortBy(k) {
      if (sortKey === k) sortDir = -sortDir;
      else { sortKey = k; sortDir = colBy[k].num ? -1 : 1; }
      apply();
    }
    function setFilter(s) { q = String(s || '').trim().toLowerCase(); if (input.value !== s) input.value = s; apply(); }
    wrap._setFilter = setFilter;
    apply();
    return wrap;
  }

  /* ------------------------------------------------------------- charts */
  function chart(el, option) {
    if (typeof echarts === 'undefined') { el.appendChild(empty('Charts unavailable: the charting library is not in this page.')); return null; }
    var t = performance.now();
    var c = echarts.init(el, null, { renderer: 'canvas' });
    option.animation = false;
    c.setOption(option);
    charts.push(c);
    timing.charts.push([el.id, Math.round(performance.now() - t)]);
    return c;
  }
  window.addEventListener('resize', function () { charts.forEach(function (c) { if (c.getDom().offsetParent) c.resize(); }); });

  function tipWorker(w, lines) {
    var s = '<b>' + esc(w.id) + '</b>';
    if (w.rank != null || w.host) s += '<br>' + esc((w.rank != null ? 'rank ' + w.rank : '') + (w.host ? ' · ' + w.host : ''));
    return s + lines.map(function (l) { return '<br>' + esc(l); }).join('');
  }
  function zoomFor(n) {
    return n > 64 ? [{ type: 'inside', xAxisIndex: 0 }, { type: 'slider', xAxisIndex: 0, height: 16, bottom: 4 }] : [];
  }
  function medianLine(v) {
    return isNum(v) ? { silent: true, symbol: 'none', lineStyle: { color: '#57606a', type: 'dashed' },
      label: { formatter: 'median', position: 'insideEndTop' }, data: [{ yAxis: v }] } : undefined;
  }
  function axisNames(ws) { return ws.map(function (w) { return w.rank != null ? String(w.rank) : w.id; }); }
  function goWorker(p) { if (p && p.dataIndex != null && M.workers[p.dataIndex]) location.hash = '#worker/' + encodeURIComponent(M.workers[p.dataIndex].id); }

  /* Per-worker charts.  Few workers: bars on a category axis.  Many: points
     on a value axis (x = position in rank order) drawn from plain [x, y]
     arrays, outliers as a separate red series: per-item styles and 1,000
     category labels made the 1,000-worker overview ~3x slower to draw. */
  function xAxisFor(ws, many) {
    if (!many) return { type: 'category', data: axisNames(ws), name: 'rank', nameLocation: 'middle', nameGap: 24 };
    return { type: 'value', min: 0, max: ws.length - 1, minInterval: 1, name: 'rank', nameLocation: 'middle', nameGap: 24,
      splitLine: { show: false },
      axisLabel: { formatter: function (v) { var w = ws[v]; return Math.round(v) === v && w ? (w.rank != null ? String(w.rank) : String(v)) : ''; } } };
  }
  function pointIndex(p) { return Array.isArray(p.value) ? p.value[0] : p.dataIndex; }
  function legend(items) {
    return h('div', { class: 'legend' }, items.filter(Boolean).map(function (it) { return h('span', null, h('i', { style: 'background:' + it[0] + (it[2] || '') }), it[1]); }));
  }

  function utilChart() {
    var ws = M.workers.filter(function (w) { return isNum(w.util); });
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: 'GPU utilization per worker' })),
      legend([['#4e79a7', 'worker'], ['#cf222e', 'abnormal (GPU Compute section)'], ['#57606a', 'median', ';height:2px']]));
    if (!ws.length) { card.appendChild(empty('No worker has a GPU utilization in this report.')); return card; }
    var el = h('div', { class: 'chart', id: 'chart-util' });
    card.appendChild(el);
    /* Many workers: an axis fitted to the data, so that a few percent of
       difference (what an outlier looks like) is visible. */
    var many = ws.length > 24;
    var umin = Math.min.apply(null, ws.map(function (w) { return w.util; }));
    var umax = Math.max.apply(null, ws.map(function (w) { return w.util; }));
    var lo = many ? Math.max(0, Math.floor((umin - 0.02) * 20) / 20) : 0;
    var hi = many ? Math.min(1, Math.ceil((umax + 0.02) * 20) / 20) : 1;
    queue(function () {
      var norm = [], bad = [];
      ws.forEach(function (w, i) { (w.id in M.abnUtil ? bad : norm).push([i, w.util]); });
      var series = many
        ? [{ type: 'scatter', symbolSize: 4, progressive: 0, large: true, largeThreshold: 200, itemStyle: { color: '#4e79a7' }, data: norm, markLine: medianLine(M.utilMedian) }]
        : [{ type: 'bar', barMaxWidth: 28, progressive: 0, markLine: medianLine(M.utilMedian),
          data: ws.map(function (w) { return { value: w.util, itemStyle: { color: w.id in M.abnUtil ? '#cf222e' : '#4e79a7' } }; }) }];
      if (many) series.push({ type: 'scatter', symbolSize: 9, progressive: 0, z: 5, itemStyle: { color: '#cf222e' }, data: bad });
      var c = chart(el, {
        grid: { left: 50, right: 16, top: 16, bottom: ws.length > 64 ? 56 : 40 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var w = ws[pointIndex(p)];
          return w ? tipWorker(w, ['GPU utilization ' + pct(w.util), 'median ' + pct(M.utilMedian)].concat(w.id in M.abnUtil ? ['abnormal'] : [])) : '';
        } },
        xAxis: xAxisFor(ws, many),
        yAxis: { type: 'value', min: lo, max: hi, interval: many ? (hi - lo <= 0.3 ? 0.05 : 0.1) : 0.2,
          axisLabel: { formatter: function (v) { return (v * 100).toFixed(0) + '%'; } } },
        dataZoom: zoomFor(ws.length),
        series: series
      });
      if (c) c.on('click', function (p) { var w = ws[pointIndex(p)]; if (w) location.hash = '#worker/' + encodeURIComponent(w.id); });
    });
    return card;
  }

  function stepChart() {
    var ws = M.workers.filter(function (w) { return isNum(w.step); });
    var many = ws.length > 24;
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: M.stepExact ? 'Step time per worker' : 'Mean step time per worker' })),
      legend([[many ? '#4e79a7' : '#9cc3e6', M.stepExact ? 'median step' : 'window / steps'],
        M.stepExact ? [many ? '#8c959f' : '#24292f', 'each step', ';border-radius:5px'] : null,
        ['#cf222e', 'slow outlier (> median + 3 MAD and > 5%)'], ['#57606a', 'median', ';height:2px']]));
    if (!M.stepExact) card.appendChild(h('div', { class: 'note', text: 'This report has no per-step times: each bar is the worker\'s profiled window divided by its step count.' }));
    if (!ws.length) { card.appendChild(empty('No worker has step times in this report.')); return card; }
    var el = h('div', { class: 'chart', id: 'chart-step' });
    card.appendChild(el);
    queue(function () {
      var pts = [], norm = [], slow = [];
      ws.forEach(function (w, i) {
        if (M.stepExact) (w.stepMs || []).forEach(function (st) { pts.push([i, st]); });
        (w.slowStep ? slow : norm).push([i, w.step]);
      });
      var series = many
        ? [{ type: 'scatter', symbolSize: 5, progressive: 0, z: 3, large: true, largeThreshold: 200, itemStyle: { color: '#4e79a7' }, data: norm, markLine: medianLine(M.stepMedian) },
          { type: 'scatter', symbolSize: 9, progressive: 0, z: 5, itemStyle: { color: '#cf222e' }, data: slow }]
        : [{ type: 'bar', barMaxWidth: 24, progressive: 0, markLine: medianLine(M.stepMedian),
          data: ws.map(function (w) { return { value: w.step, itemStyle: { color: w.slowStep ? '#cf222e' : '#9cc3e6' } }; }) }];
      if (pts.length) series.push({ type: 'scatter', symbolSize: many ? 2 : 4, progressive: 0, z: 2, silent: many, large: many, largeThreshold: 200,
        itemStyle: { color: many ? '#8c959f' : '#24292f' }, data: pts });
      var c = chart(el, {
        grid: { left: 60, right: 16, top: 16, bottom: ws.length > 64 ? 56 : 40 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var w = ws[pointIndex(p)];
          if (!w) return '';
          var l = [(M.stepExact ? 'median step ' : 'mean step ') + ms(w.step), 'median of workers ' + ms(M.stepMedian)];
          if (w.stepMs && w.stepMs.length) l.push('steps: ' + w.stepMs.map(function (st) { return st.toFixed(2); }).join(', ') + ' ms');
          if (w.slowStep) l.push('slow outlier');
          return tipWorker(w, l);
        } },
        xAxis: xAxisFor(ws, many),
        yAxis: { type: 'value', name: 'ms', scale: many },
        dataZoom: zoomFor(ws.length),
        series: series
      });
      if (c) c.on('click', function (p) { var w = ws[pointIndex(p)]; if (w) location.hash = '#worker/' + encodeURIComponent(w.id); });
    });
    return card;
  }

  function classChart(only) {
    var ws = (only || M.workers).filter(function (w) { return obj(w.classMs); });
    var card = h('div', { class: 'chart-card' });
    var mode = 'pct';
    var hd = h('div', { class: 'hd' }, h('h3', { text: only ? 'Time breakdown by class' : 'Time breakdown by class, per worker' }));
    card.appendChild(hd);
    if (ws.length) card.appendChild(legend(CLASSES.map(function (c2) { return [CLASS_COLOR[c2], c2]; })));
    if (!ws.length) {
      card.appendChild(empty('This report has no per-class breakdown of the time (re-run perftracker analyze or diagnose to get one).'));
      return card;
    }
    var el = h('div', { class: 'chart', id: only ? 'chart-class-one' : 'chart-class', style: only ? 'height:140px' : null });
    var b1 = h('button', { type: 'button', class: 'btn on', text: '% of window' });
    var b2 = h('button', { type: 'button', class: 'btn', text: 'ms' });
    hd.appendChild(h('div', { class: 'ctl' }, b1, b2));
    card.appendChild(el);
    var c = null;
    /* Many workers: stacked areas over the workers in rank order (one flat
       step per worker) instead of 6 x N bars, which took ~0.4 s to draw
       for 1,000 workers. */
    var many = !only && ws.length > 64;
    function opt() {
      return {
        grid: { left: only ? 16 : 60, right: 16, top: 10, bottom: only ? 24 : (ws.length > 64 ? 56 : 40), containLabel: !!only },
        tooltip: { trigger: 'axis', axisPointer: { type: many ? 'line' : 'shadow' }, formatter: function (ps) {
          var w = ws[many ? Math.round(ps[0].value[0]) : ps[0].dataIndex];
          if (!w) return '';
          var tot = CLASSES.reduce(function (s, k) { return s + (isNum(w.classMs[k]) ? w.classMs[k] : 0); }, 0);
          return tipWorker(w, CLASSES.map(function (k) { var v = w.classMs[k]; return k + ': ' + ms(v) + ' (' + pct(tot ? v / tot : NaN) + ')'; }));
        } },
        xAxis: only ? { type: 'value', max: mode === 'pct' ? 1 : null, axisLabel: { formatter: mode === 'pct' ? function (v) { return (v * 100) + '%'; } : '{value}' } }
          : xAxisFor(ws, many),
        yAxis: only ? { type: 'category', data: [''] }
          : { type: 'value', max: mode === 'pct' ? 1 : null, name: mode === 'pct' ? '' : 'ms',
            axisLabel: { formatter: mode === 'pct' ? function (v) { return (v * 100).toFixed(0) + '%'; } : '{value}' } },
        dataZoom: only ? [] : zoomFor(ws.length),
        series: CLASSES.map(function (k) {
          var data = ws.map(function (w, i) {
            var tot = CLASSES.reduce(function (s, kk) { return s + (isNum(w.classMs[kk]) ? w.classMs[kk] : 0); }, 0);
            var v = isNum(w.classMs[k]) ? w.classMs[k] : 0;
            v = mode === 'pct' ? (tot ? v / tot : 0) : v;
            return many ? [i, v] : v;
          });
          if (many) return { name: k, type: 'line', stack: 'all', step: 'middle', symbol: 'none', progressive: 0,
            lineStyle: { width: 0 }, areaStyle: { color: CLASS_COLOR[k], opacity: 1 }, itemStyle: { color: CLASS_COLOR[k] }, data: data };
          return { name: k, type: 'bar', stack: 'all', barMaxWidth: 28, progressive: 0, itemStyle: { color: CLASS_COLOR[k] }, data: data };
        })
      };
    }
    function set(m2) { mode = m2; b1.classList.toggle('on', m2 === 'pct'); b2.classList.toggle('on', m2 === 'ms'); if (c) c.setOption(opt(), true); }
    b1.addEventListener('click', function () { set('pct'); });
    b2.addEventListener('click', function () { set('ms'); });
    queue(function () {
      c = chart(el, opt());
      if (c && !only && !many) c.on('click', function (p) { var w = ws[p.dataIndex]; if (w) location.hash = '#worker/' + encodeURIComponent(w.id); });
    });
    return card;
  }

  /* Charts are drawn after their container is in the document (ECharts
     needs a size); each view queues its charts and runs them once shown. */
  var pending = [];
  function queue(fn) { pending.push(fn); }
  function flush() { var p = pending; pending = []; p.forEach(function (fn) { fn(); }); }

  /* ------------------------------------------------------------- views */
  function findingTarget(f) {
    var c = String(f.category || '').toLowerCase();
    if (c.indexOf('hang') >= 0) return 'hang';
    if (c.indexOf('memory') >= 0) return 'memory';
    if (c.indexOf('commun') >= 0 || c.indexOf('nccl') >= 0) return 'communication';
    if (c.indexOf('runtime') >= 0) return 'runtime';
    if (c.indexOf('python') >= 0) return 'python';
    if (c.indexOf('compute') >= 0 || c.indexOf('gpu') >= 0 || c.indexOf('kernel') >= 0) return 'compute';
    if (c.indexOf('step') >= 0 || c.indexOf('worker') >= 0 || c.indexOf('slow') >= 0) return 'workers';
    return null;
  }
  function fmtMetric(metric, v) {
    var m = String(metric || '');
    if (!isNum(v)) return v == null ? '–' : String(v);
    if (/\(ms\)|\bms\b/.test(m)) return ms(v);
    if (/in \[0,1\]|\bratio\b|utili[sz]ation/i.test(m)) return pct(v);
    return num(v);
  }
  function whoText(ids) {
    if (!ids.length) return 'All workers';
    if (ids.length === 1) {
      var w = M.byId[ids[0]];
      return w && w.rank != null ? 'Worker rank ' + w.rank + (w.host ? ' on ' + w.host : '') : 'Worker ' + ids[0];
    }
    return ids.length + ' workers';
  }

  /* "impact (ms)" is per profiled window; the sentences say per step */
  function impactPerStep(f, ids) {
    var w = ids.length === 1 ? M.byId[ids[0]] : null, n = w && w.steps > 0 ? w.steps : 0;
    return n ? ms(f['impact (ms)'] / n) + ' per step' : ms(f['impact (ms)']);
  }
  function findingCard(f, i) {
    var ids = (Array.isArray(f.workers) ? f.workers : []).map(String);
    var fn = f['function'] != null ? String(f['function']) : '';
    var ratio = isNum(f.value) && isNum(f.others) && f.others > 0 ? f.value / f.others : NaN;
    var ev = [];
    if (f.metric != null || isNum(f.value)) {
      ev.push((f.metric ? lbl(f.metric) + ': ' : '') + fmtMetric(f.metric, f.value));
      if (f.others != null) ev.push(' vs ' + fmtMetric(f.metric, f.others) + ' on the other workers' + (isNum(ratio) ? ' (' + ratio.toFixed(ratio < 10 ? 2 : 0) + '×)' : ''));
    }
    var tgt = findingTarget(f);
    var chips = h('div', { class: 'meta' });
    ids.slice(0, 12).forEach(function (id) { chips.appendChild(workerLink(id, 'bad')); });
    if (ids.length > 12) chips.appendChild(h('span', { class: 'muted', text: 'and ' + (ids.length - 12) + ' more' }));
    var cf = obj(f.confidence), lvl = cf && typeof cf.level === 'string' ? cf.level : '';
    return h('div', { class: 'finding' + (lvl ? ' conf-' + lvl : ''), 'data-rank': f.rank, 'data-confidence': lvl || null },
      h('div', { class: 'rank', text: '#' + (isNum(f.rank) ? f.rank : i + 1) }),
      h('div', { class: 'title' }, whoText(ids), fn ? [': ', fnName(fn)] : null),
      ev.length ? h('div', { class: 'evidence', text: ev.join('') }) : null,
      f.explanation ? h('div', { class: 'expl', text: String(f.explanation) }) : null,
      cf && cf.evidence ? h('div', { class: 'confidence-note', text: (lvl ? lvl + ': ' : '') + String(cf.evidence) }) : null,
      h('div', { class: 'meta' },
        lvl ? h('span', { class: 'badge conf ' + lvl, title: 'how strong this finding is: time lost, how far from the other workers, every call or only some slower', text: lvl }) : null,
        f.category ? h('span', { class: 'badge', text: String(f.category) }) : null,
        isNum(f['impact (ms)']) ? h('span', { class: 'badge bad', title: 'time lost, ' + ms(f['impact (ms)']) + ' over the profiled window', text: 'impact ≈ ' + impactPerStep(f, ids) }) : null,
        tgt ? h('a', { href: '#' + tgt + (ids.length === 1 ? '?q=' + encodeURIComponent(ids[0]) : ''), text: 'see ' + (SECTION[tgt] || tgt) + ' →' }) : null),
      ids.length ? chips : null,
      evidenceList(f));
  }

  /* The other sections' findings of the same cause, the frames inside it,
   * a straggler's own collectives and its victims' symptoms, merged into
   * this finding (docs/diagnose.md "One finding per cause"). */
  function evidenceList(f) {
    var ev = (Array.isArray(f.evidence) ? f.evidence : []).filter(obj);
    if (!ev.length) return null;
    return h('details', { class: 'merged-evidence' },
      h('summary', { text: 'Also seen: ' + plural(ev.length, 'finding') + ' of this cause (' +
        ev.map(function (e) { return String(e.kind || ''); }).filter(function (k, i, a) { return a.indexOf(k) === i; }).join(', ') + ')' }),
      h('ul', null, ev.map(function (e) {
        var w = e.worker ? String(e.worker) : '';
        return h('li', null, h('span', { class: 'badge', text: String(e.kind || '') }), ' ',
          w ? workerLink(w) : null, w ? ' ' : null,
          h('span', { text: (e.category ? String(e.category) + ': ' : '') + String(e.explanation || e['function'] || '') }));
      })));
  }

  function isWeak(f) {
    var cf = obj(f.confidence);
    return !!(cf && cf.level === 'weak');
  }

  /* Does the job run GPU kernels?  Without any, GPU charts are empty. */
  function hasGpu() {
    return M.workers.some(function (w) { return isNum(w.util) && w.util > 0; });
  }

  /* ---- lockstep (report "Lockstep", docs/diagnose.md) ---------------------
   * In a synchronous job the worker with the longest step is usually the
   * one that waits most, a victim; the one the others wait for is the
   * straggler.  These helpers keep the overview from calling the longest
   * waiter "slowest". */
  function lockstepOf() {
    var l = obj(M.rep.Lockstep);
    if (!l || !obj(l.workers)) return null;
    var byId = {};
    M.workers.forEach(function (w) { byId[w.id] = w; });
    var rows = keys(l.workers).map(function (id) {
      var r = obj(l.workers[id]) || {};
      return { id: id, w: byId[id] || null, rank: isNum(r.rank) ? r.rank : null,
        waited: r['waited for others (ms)'], blamed: r['others waited for it (ms)'],
        last: r['last arrivals'], straggler: r.straggler === true, mismatch: r.mismatch || null,
        own: r['own step (ms)'] };
    });
    rows.sort(function (a, b) { return (b.blamed || 0) - (a.blamed || 0) || (b.waited || 0) - (a.waited || 0) || (a.id < b.id ? -1 : 1); });
    var strag = (Array.isArray(l.stragglers) ? l.stragglers : []).map(obj).filter(Boolean);
    return { l: l, rows: rows, stragglers: strag };
  }

  function lockName(r) { return r.rank != null && r.rank >= 0 ? 'rank ' + r.rank : r.id; }

  function stepStatNote() {
    var L = lockstepOf();
    if (L && L.stragglers.length) {
      var s = L.stragglers[0];
      return 'others waited for: ' + (isNum(s.rank) && s.rank >= 0 ? 'rank ' + s.rank : String(s.worker)) +
        ' (' + ms(s['others waited for it (ms)']) + ' in all)';
    }
    var longest = M.workers.filter(function (w) { return isNum(w.step); }).sort(function (a, b) { return b.step - a.step; })[0];
    if (!longest) return null;
    /* the longest step may be the longest wait: say so when lockstep data shows it */
    return 'longest: ' + workerLabel(longest) + ', ' + ms(longest.step) + (L ? ' (waiting included)' : '');
  }

  function lockBar(v, max, color) {
    var wpx = isNum(v) && max > 0 ? Math.max(0, Math.round(160 * v / max)) : 0;
    return h('span', { class: 'lock-bar-wrap', style: 'display:inline-flex;align-items:center;gap:6px' },
      h('span', { class: 'lock-bar', style: 'display:inline-block;height:10px;width:' + wpx + 'px;background:' + color }),
      h('span', { text: isNum(v) ? ms(v) : '–' }));
  }

  function lockstepCard() {
    var L = lockstepOf();
    if (!L) return null;
    var max = 0;
    L.rows.forEach(function (r) { max = Math.max(max, isNum(r.waited) ? r.waited : 0, isNum(r.blamed) ? r.blamed : 0); });
    var card = h('div', { class: 'chart-card', id: 'lockstep' },
      h('div', { class: 'hd' }, h('h3', { text: 'Who waited for whom (collectives)' })));
    card.appendChild(legend([['#cf222e', 'others waited for it (blame)'], ['#9cc3e6', 'waited for others (victim)']]));
    if (L.stragglers.length) {
      var s = L.stragglers[0], wi = obj(s['what if']) || {};
      card.appendChild(h('div', { class: 'note lock-summary', text: (isNum(s.rank) && s.rank >= 0 ? 'rank ' + s.rank : String(s.worker)) +
        ' is the worker the others waited for: ' + ms(s['others waited for it (ms)']) + ' in all, last at ' + s['last arrivals'] +
        ' collectives. Fixing it is worth ' + ms(wi['saved (ms)']) + ' per step (' + (isNum(wi['saved (%)']) ? wi['saved (%)'].toFixed(1) : '–') + '%).' +
        (s['predates window'] ? ' Its lateness predates the profiled window: profile more steps (--steps 2).' : '') }));
    } else {
      card.appendChild(h('div', { class: 'note lock-summary', text: 'No worker makes the others wait beyond the thresholds.' }));
    }
    var tb = h('table', { class: 'lock-table' },
      h('thead', null, h('tr', null, h('th', { text: 'worker' }), h('th', { text: 'others waited for it' }),
        h('th', { text: 'waited for others' }), h('th', { text: 'last arrivals' }), h('th', { text: 'own step' }))));
    var body = h('tbody');
    L.rows.forEach(function (r) {
      var name = h('span', null, workerLink(r.id, r.straggler ? 'bad' : null), ' ', h('span', { class: 'muted', text: '(' + lockName(r) + ')' }),
        r.straggler ? h('span', { class: 'badge bad lock-straggler', text: 'straggler' }) : null,
        r.mismatch ? h('span', { class: 'badge', text: 'collectives do not match' }) : null);
      body.appendChild(h('tr', { class: r.straggler ? 'hl' : null, 'data-worker': r.id },
        h('td', null, name), h('td', null, lockBar(r.blamed, max, '#cf222e')), h('td', null, lockBar(r.waited, max, '#9cc3e6')),
        h('td', { text: r.last != null ? String(r.last) : '–' }), h('td', { text: isNum(r.own) ? ms(r.own) : '–' })));
    });
    tb.appendChild(body);
    card.appendChild(tb);
    return card;
  }

  function viewOverview(root) {
    var n = M.workers.length;
    add(root, h('h1', { text: 'What slows this job down' }));
    if (M.hang && M.hang.hung) {
      add(root, h('div', { class: 'banner bad', id: 'hang-banner' }, h('b', { text: 'The job is hung. ' }),
        M.hang.explanation ? String(M.hang.explanation) + ' ' : '', h('a', { href: '#hang', text: 'See the hang section →' })));
    }
    var causes = M.findings.filter(function (f) { return !isWeak(f); });
    var weak = M.findings.filter(isWeak);
    if (causes.length) {
      add(root, h('div', { class: 'banner warn' }, h('b', { text: plural(causes.length, 'finding') + ', ranked by time lost. ' }),
        'Each names the workers and the function to blame and compares them with the other workers.'));
    } else if (weak.length) {
      add(root, h('div', { class: 'banner ok' }, h('b', { text: 'Nothing beyond the job\'s own noise. ' }),
        plural(weak.length, 'finding') + ' may be noise: see the group below.'));
    } else {
      add(root, h('div', { class: 'banner ok' }, h('b', { text: 'No anomaly found. ' }),
        'No worker differs from the others by more than the thresholds; the sections below list where the time goes.'));
    }
    var u = (obj(M.rep['GPU Compute']) || {})[K_UTIL];
    add(root, h('div', { class: 'stats' },
      stat('Workers', String(n), M.errors.length ? plural(M.errors.length, 'trace') + ' could not be read' : 'all traces read'),
      hasGpu() ? stat('GPU utilization (median)', Array.isArray(u) ? pct(u[1], 1) : pct(M.utilMedian, 1), Array.isArray(u) ? 'min ' + pct(u[0], 1) + ' · max ' + pct(u[2], 1) : null)
        : stat('GPU', 'none', 'no GPU kernel in the traces'),
      stat(M.stepExact ? 'Step time (median)' : 'Mean step time (median)', ms(M.stepMedian), stepStatNote()),
      stat('Slow-step outliers', String(M.workers.filter(function (w) { return w.slowStep; }).length), 'limit ' + ms(M.stepLimit))));
    var list = h('div', { id: 'findings' });
    causes.forEach(function (f, i) { list.appendChild(findingCard(f, i)); });
    if (weak.length) {
      var grp = h('details', { class: 'noise-group', id: 'possibly-noise' },
        h('summary', { text: 'Possibly noise: ' + plural(weak.length, 'finding') + ' within the job\'s own noise (the spread between workers doing the same work, CPU contention, step-to-step spread)' }));
      weak.forEach(function (f, i) { grp.appendChild(findingCard(f, causes.length + i)); });
      list.appendChild(grp);
    }
    add(root, list);
    add(root, h('div', { class: 'grid2' }, hasGpu() ? utilChart() : null, stepChart()));
    var lock = lockstepCard();
    if (lock) add(root, lock);
    if (M.errors.length) {
      add(root, h('h2', { text: 'Traces that could not be read' }));
      add(root, table({ title: 'Unreadable traces', rows: M.errors, sort: ['id', 1], cols: [
        { key: 'id', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'error', label: 'error' }] }));
    }
  }

  function workerCols() {
    return [
      { key: 'id', label: 'worker', fmt: function (v) { return workerLink(v); } },
      { key: 'rank', label: 'rank', num: true, fmt: function (v) { return v == null ? '–' : String(v); } },
      { key: 'host', label: 'host' },
      { key: 'steps', label: 'steps', num: true, fmt: function (v) { return v == null ? '–' : String(v); } },
      { key: 'window', label: 'window', num: true, fmt: ms },
      { key: 'step', label: M.stepExact ? 'median step' : 'mean step', num: true, fmt: function (v, r) { return h('span', { style: r.slowStep ? 'color:#cf222e;font-weight:600' : null, text: ms(v) }); } },
      { key: 'util', label: 'GPU util', num: true, fmt: function (v, r) { return h('span', { style: r.id in M.abnUtil ? 'color:#cf222e;font-weight:600' : null, text: pct(v, 1) }); } },
      { key: 'nflags', label: 'findings', num: true, get: function (r) { return r.flags.length; }, fmt: function (v) { return v ? h('span', { class: 'badge bad', text: String(v) }) : ''; } },
      { key: 'error', label: 'error', fmt: function (v) { return v ? h('span', { class: 'badge bad', title: v, text: 'unreadable' }) : ''; } }
    ];
  }

  function viewWorkers(root) {
    add(root, h('h1', { text: 'Workers' }));
    add(root, h('p', { class: 'note', text: 'Click a worker (in a chart or the table) for everything the report says about it.' }));
    add(root, h('div', { class: 'grid2' }, hasGpu() ? utilChart() : null, stepChart()));
    add(root, classChart());
    add(root, table({ title: 'All workers', rows: M.workers, sort: ['rank', 1], cols: workerCols(), placeholder: 'Filter by worker, host…',
      rowClass: function (r) { return r.flags.length || r.slowStep ? 'hl' : null; } }));
  }

  var ONLY_HERE = 1e9;   // deviation of a function only this worker runs (sorts first)
  function heatFmt(v) { return /ms/.test(M.heat.metric) ? ms(v) : /ratio/.test(M.heat.metric) ? pct(v) : num(v); }
  function viewWorker(root, id) {
    var w = M.byId[id];
    add(root, h('p', null, h('a', { href: '#workers', text: '← all workers' })));
    if (!w) { add(root, h('div', { class: 'fatal', text: 'No worker named "' + id + '" in this report.' })); return; }
    add(root, h('h1', null, 'Worker ', h('span', { class: 'mono', text: w.id })));
    var dl = h('dl', { class: 'kv card' });
    [['rank', w.rank], ['host', w.host], ['pid', w.pid], ['trace', w.file],
      ['steps', w.steps != null ? w.steps + (w.stepNumbers ? ' (ProfilerStep ' + w.stepNumbers.join(', ') + ')' : '') : null], ['window', ms(w.window)],
      [M.stepExact ? 'median step' : 'mean step', ms(w.step) + (w.slowStep ? '  (slow outlier)' : '')],
      ['GPU utilization', pct(w.util, 1) + (w.id in M.abnUtil ? '  (abnormal)' : '')],
      ['GPU compute utilization', (function () { var r = obj((obj(M.rep.workers) || {})[w.id]) || {}; return isNum(r['gpu compute utilization']) ? pct(r['gpu compute utilization'], 1) : null; })()],
      ['step times', w.stepMs ? w.stepMs.map(function (s) { return ms(s); }).join(', ') : null], ['error', w.error]]
      .forEach(function (p) { if (p[1] != null && p[1] !== '') add(dl, [h('dt', { text: p[0] }), h('dd', { text: String(p[1]) })]); });
    add(root, dl);
    if (w.flags.length) {
      add(root, h('h2', { text: 'Findings that name this worker' }));
      w.flags.forEach(function (f, i) { add(root, findingCard(f, i)); });
    }
    add(root, classChart([w]));
    /* This worker's row of the heatmap: where it is furthest from the median. */
    var H = M.heat, hr = H.rows.indexOf(id), hrows = [];
    if (hr >= 0) (H.vals[hr] || []).forEach(function (v, j) {
      if (!isNum(v)) return;
      /* with the report's per-function values a worker without the function
         spends 0 in it; a median of 0: only this worker runs it */
      var med = H.exact ? median(H.vals.map(function (r) { return isNum(r[j]) ? r[j] : 0; })) : H.med[j];
      if (!isNum(med)) return;
      var d = med > 0 ? v / med - 1 : v > 0 ? ONLY_HERE : 0;
      if (Math.abs(d) >= 0.2) hrows.push({ fn: H.funcs[j].key, cls: H.funcs[j].cls, v: v, med: med, dev: d });
    });
    add(root, h('h2', { text: 'Heatmap: where this worker differs from the median' }));
    add(root, table({ title: 'Functions at least 20% from the median (' + H.metric + ')', rows: hrows, page: 15, sort: ['dev', -1], cls: 'worker-heat',
      empty: hr >= 0 ? 'Every function is within 20% of the median of all workers.' : 'The heatmap has no row for this worker.',
      cols: [{ key: 'fn', label: 'function', fmt: function (v) { return fnName(v); } }, { key: 'cls', label: 'class' },
        { key: 'v', label: 'this worker', num: true, fmt: function (v) { return heatFmt(v); } },
        { key: 'med', label: 'median', num: true, fmt: function (v) { return heatFmt(v); } },
        { key: 'dev', label: 'deviation', num: true, fmt: function (v) { return v >= ONLY_HERE ? 'only here' : signedPct(v); } }] }));
    /* Everything the sections list about this worker. */
    var rows = [];
    var rep = M.rep;
    var gc = obj(rep['GPU Compute']) || {};
    if (id in (obj(gc[K_ABN_UTIL]) || {})) rows.push({ sec: 'GPU Compute', fn: 'GPU utilization', metric: 'abnormal GPU utilization', v: gc[K_ABN_UTIL][id] });
    var det = obj(obj(gc[K_DETAIL]) && gc[K_DETAIL][id]) || {};
    keys(det).forEach(function (k) { var r = obj(det[k]) || {}; rows.push({ sec: 'GPU Compute', fn: k, metric: K_MED_COST + ' (others ' + ms(r[K_OTHERS]) + ', slower by ' + (r['slower by'] != null ? r['slower by'] : '?') + ')', v: r[K_MED_COST] }); });
    [['GPU memory operations'], ['CUDA Runtime']].forEach(function (p) {
      var sec = obj(rep[p[0]]) || {};
      keys(sec).forEach(function (op) { var ab = obj(obj(sec[op]) && sec[op].abnormal_workers) || {}; if (id in ab) rows.push({ sec: p[0], fn: op, metric: 'bottleneck ratio (abnormal)', v: ab[id] }); });
    });
    commRows().forEach(function (r) { if (r.worker === id && r.abnormal) rows.push({ sec: 'Communication', fn: r.group + ' · ' + r.kernel, metric: 'different from other workers', v: r.diff }); });
    var py = obj(rep['Python functions']) || {};
    keys(py).forEach(function (st) { var ws = obj(py[st]) || {}; if (id in ws) rows.push({ sec: 'Python functions', fn: st, metric: 'bottleneck ratio', v: ws[id] }); });
    add(root, h('h2', { text: 'What the sections list for this worker' }));
    add(root, table({ title: 'Entries naming ' + workerLabel(w), rows: rows, sort: ['sec', 1], empty: 'No section lists this worker as abnormal.', cols: [
      { key: 'sec', label: 'section' },
      { key: 'fn', label: 'function', fmt: function (v) { return fnName(v); } },
      { key: 'metric', label: 'metric' },
      { key: 'v', label: 'value', num: true, fmt: function (v, r) { return /ratio|utilization/.test(r.metric) ? pct(v) : /^median cost/.test(r.metric) ? ms(v) : num(v); } }] }));
  }

  function viewCompute(root) {
    var gc = obj(M.rep['GPU Compute']);
    add(root, h('h1', { text: 'GPU Compute' }));
    add(root, howto('GPU Compute', [
      [K_UTIL, 'The lowest, median and highest GPU utilization across all workers, as the seed defines it: GPU busy, the share of the profiled window in which at least one kernel (compute or communication) was running. Communication kernels that only wait for a late peer count, so victims of a straggler look busy.'],
      [K_CUTIL, 'GPU compute utilization: the share of the window in which at least one compute kernel was running (communication kernels and memory copies excluded).'],
      [K_ABN_UTIL, 'Empty when no worker\'s utilization stands out from the others; otherwise the outlying workers and their utilization.'],
      [K_MAJOR, 'The compute kernels that cost the most time, with the median cost per execution and the bottleneck ratio (share of end-to-end time the kernel owns, overlap with nothing higher excluded).'],
      [K_ISSUES, 'Workers whose kernels run slower than the same kernels on the other workers. Empty when all workers perform alike.'],
      [K_DETAIL, 'Present when some worker has potential GPU issues: which worker ran which kernel slower than normal, and by how much.']]));
    if (!gc) { add(root, empty('This report has no GPU Compute section.')); return; }
    var u = gc[K_UTIL];
    if (Array.isArray(u)) add(root, h('div', { class: 'stats' }, stat('min GPU utilization (busy)', pct(u[0], 1)), stat('median', pct(u[1], 1)), stat('max', pct(u[2], 1))));
    var cu = gc[K_CUTIL];
    if (Array.isArray(cu)) add(root, h('div', { class: 'stats', id: 'compute-util' }, stat('min GPU compute utilization', pct(cu[0], 1)), stat('median', pct(cu[1], 1)), stat('max', pct(cu[2], 1))));
    var low = obj(gc['low-occupancy kernels']);
    if (low) add(root, table({ title: 'Heavy kernels at low occupancy', sort: ['bn', -1], rows: keys(low).map(function (k) { var r = obj(low[k]) || {}; return { kernel: k, bn: r[K_BN], occ: r['est. achieved occupancy %'], bps: r['blocks per SM'], regs: r['registers per thread'], smem: r['shared memory'] }; }),
      cols: [{ key: 'kernel', label: 'kernel', fmt: function (v) { return fnName(v); } },
        { key: 'bn', label: K_BN, num: true, fmt: function (v) { return pct(v); } },
        { key: 'occ', label: 'est. achieved occupancy %', num: true, fmt: function (v) { return isNum(v) && v >= 0 ? v.toFixed(0) + '%' : '–'; } },
        { key: 'bps', label: 'blocks per SM', num: true, fmt: function (v) { return isNum(v) ? v.toFixed(2) : '–'; } },
        { key: 'regs', label: 'registers per thread', num: true, fmt: function (v) { return isNum(v) ? String(v) : '–'; } },
        { key: 'smem', label: 'shared memory (bytes)', num: true, fmt: function (v) { return isNum(v) ? String(v) : '–'; } }] }));
    var au = obj(gc[K_ABN_UTIL]) || {};
    add(root, table({ title: 'Workers with abnormal GPU utilization', empty: 'None: no worker\'s GPU utilization stands out.', sort: ['util', 1],
      rows: keys(au).map(function (id) { return { worker: id, util: au[id], dev: isNum(au[id]) && M.utilMedian ? au[id] / M.utilMedian - 1 : NaN }; }),
      cols: [{ key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'util', label: 'GPU utilization', num: true, fmt: function (v) { return pct(v, 1); } },
        { key: 'dev', label: 'vs median', num: true, fmt: signedPct }] }));
    var mk = obj(gc[K_MAJOR]) || {};
    add(root, table({ title: 'Major kernel executions', sort: ['bn', -1], placeholder: 'Filter kernels…',
      rows: keys(mk).map(function (k) { var r = obj(mk[k]) || {}; return { kernel: k, cost: r[K_MED_COST], bn: r[K_BN] }; }),
      cols: [{ key: 'kernel', label: 'kernel (name + grid|block)', fmt: function (v) { return fnName(v); } },
        { key: 'cost', label: K_MED_COST, num: true, fmt: ms },
        { key: 'bn', label: lbl(K_BN), num: true, fmt: function (v) { return pct(v); } }] }));
    var iss = Array.isArray(gc[K_ISSUES]) ? gc[K_ISSUES] : [];
    add(root, h('h3', { text: K_ISSUES }));
    add(root, iss.length ? h('div', { class: 'card' }, iss.map(function (id) { return workerLink(String(id), 'bad'); })) : h('div', { class: 'card muted', text: 'None: all workers run their kernels at the same speed.' }));
    var det = obj(gc[K_DETAIL]) || {};
    var rows = [];
    keys(det).forEach(function (wid) {
      keys(obj(det[wid])).forEach(function (k) {
        var r = obj(det[wid][k]) || {};
        var sb = r['slower by'];
        var sbn = typeof sb === 'number' ? sb : parseFloat(sb);
        rows.push({ worker: wid, kernel: k, mine: r[K_MED_COST], others: r[K_OTHERS], slower: sb, slowerN: isNum(sbn) ? sbn : null });
      });
    });
    add(root, table({ title: K_DETAIL, empty: 'Empty: no worker has potential GPU issues.', sort: ['slowerN', -1], rows: rows, placeholder: 'Filter by worker or kernel…',
      cols: [{ key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'kernel', label: 'kernel', fmt: function (v) { return fnName(v); } },
        { key: 'mine', label: K_MED_COST, num: true, fmt: ms },
        { key: 'others', label: K_OTHERS, num: true, fmt: ms },
        { key: 'slowerN', label: 'slower by', num: true, fmt: function (v, r) { return r.slower == null ? '–' : String(r.slower); } }] }));
  }

  function ratioSection(root, name, explain, extraCols) {
    var sec = obj(M.rep[name]);
    add(root, h('h1', { text: name }));
    add(root, explain);
    if (!sec) { add(root, empty('This report has no ' + name + ' section.')); return; }
    var ops = keys(sec).map(function (op) {
      var r = obj(sec[op]) || {};
      var ab = obj(r.abnormal_workers) || {};
      var o = { op: op, avg: r[K_AVG_BN], n: keys(ab).length, ab: ab };
      (extraCols || []).forEach(function (c) { o[c[0]] = r[c[1]]; });
      return o;
    });
    var cols = [{ key: 'op', label: name === 'CUDA Runtime' ? 'API' : 'operation', fmt: function (v) { return fnName(v); } },
      { key: 'avg', label: lbl(K_AVG_BN), num: true, fmt: function (v) { return pct(v); } }];
    (extraCols || []).forEach(function (c) { cols.push({ key: c[0], label: lbl(c[1]), num: true, fmt: function (v) { return pct(v); } }); });
    cols.push({ key: 'n', label: 'abnormal workers', num: true, fmt: function (v) { return v ? h('span', { class: 'badge bad', text: String(v) }) : '0'; } });
    add(root, table({ title: name, rows: ops, sort: ['avg', -1], cols: cols }));
    var flat = [];
    ops.forEach(function (o) { keys(o.ab).forEach(function (w) { flat.push({ op: o.op, worker: w, ratio: o.ab[w], vs: isNum(o.avg) && o.avg > 0 && isNum(o.ab[w]) ? o.ab[w] / o.avg : NaN }); }); });
    add(root, table({ title: 'abnormal_workers', rows: flat, sort: ['ratio', -1], empty: 'No worker is above the threshold.', placeholder: 'Filter by worker or ' + (name === 'CUDA Runtime' ? 'API' : 'operation') + '…',
      cols: [{ key: 'op', label: name === 'CUDA Runtime' ? 'API' : 'operation', fmt: function (v) { return fnName(v); } },
        { key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'ratio', label: 'bottleneck ratio', num: true, fmt: function (v) { return pct(v); } },
        { key: 'vs', label: '× average', num: true, fmt: function (v) { return isNum(v) ? v.toFixed(2) + '×' : '–'; } }] }));
  }

  function viewMemory(root) {
    ratioSection(root, 'GPU memory operations', howto('GPU memory operations', [
      [K_AVG_BN, 'The average share of end-to-end time spent in this memory operation (memcpy/memset) during the profiled window, across workers.'],
      ['abnormal_workers', 'Workers whose bottleneck ratio for this operation is above 0.01 (1%), the threshold at which a memory operation is considered abnormal, with their ratio.']]));
  }
  function viewRuntime(root) {
    ratioSection(root, 'CUDA Runtime', howto('CUDA Runtime', [
      [K_AVG_BN, 'The average share of end-to-end time spent in this CUDA runtime call, excluding time that overlaps with GPU computation, communication or memory operations.'],
      [K_AVG_EXEC, 'The average time spent in the call as a share of the whole monitoring duration, overlap included.'],
      ['abnormal_workers', 'Workers whose bottleneck ratio for this call is above 0.01 (1%), the threshold at which a runtime call is considered abnormal.']]), [['exec', K_AVG_EXEC]]);
  }

  var commCache = null;
  function commRows() {
    if (commCache) return commCache;
    var sec = obj(M.rep.Communication) || {};
    var rows = [];
    keys(sec).forEach(function (g) {
      keys(obj(sec[g])).forEach(function (k) {
        var e = obj(sec[g][k]) || {};
        var nw = obj(e.example_of_normal_worker);
        var ab = Array.isArray(e.abnormal_workers) ? e.abnormal_workers : [];
        var mk = function (x, abnormal) {
          x = obj(x) || {};
          return { group: g, kernel: k, worker: x.worker != null ? String(x.worker) : '', diff: x['different from other workers'],
            features: obj(x.features) || {}, abnormal: abnormal, nab: ab.length };
        };
        if (nw) rows.push(mk(nw, false));
        ab.forEach(function (x) { rows.push(mk(x, true)); });
      });
    });
    commCache = rows;
    return rows;
  }
  function viewComm(root) {
    add(root, h('h1', { text: 'Communication' }));
    add(root, howto('Communication', [
      ['group (e.g. "nvlink ring send")', 'Collective kernels are grouped by the link they use, the algorithm and the direction; each group lists its kernels.'],
      ['example_of_normal_worker', 'The normal behaviour of the kernel, taken from a typical worker: its bottleneck ratio (share of end-to-end time, overlap with computation excluded) and, when hardware samples cover it, the link\'s average throughput and its standard deviation.'],
      ['different from other workers', 'How far this worker\'s features are from the other workers\' (0: typical).'],
      ['abnormal_workers', 'If not empty, the workers whose behaviour for this kernel differs from the others, with their features.']]));
    if (!obj(M.rep.Communication)) { add(root, empty('This report has no Communication section.')); return; }
    var rows = commRows();
    var fk = [];
    rows.forEach(function (r) { keys(r.features).forEach(function (k) { if (fk.indexOf(k) < 0) fk.push(k); }); });
    var fcols = fk.map(function (k) {
      return { key: 'f:' + k, label: lbl(k), num: true, get: function (r) { return r.features[k]; },
        fmt: function (v) { return /in \[0,1\]/.test(k) ? pct(v) : /%/.test(k) ? (isNum(v) ? v.toFixed(1) + '%' : '–') : /\(ms\)/.test(k) ? ms(v) : num(v); } };
    });
    var base = [{ key: 'group', label: 'group' }, { key: 'kernel', label: 'kernel', fmt: function (v) { return fnName(v); } }];
    add(root, table({ title: 'Collectives (example of a normal worker)', rows: rows.filter(function (r) { return !r.abnormal; }), sort: ['group', 1],
      cols: base.concat([{ key: 'worker', label: 'normal worker', fmt: function (v) { return v ? workerLink(v, null, true) : '–'; } }], fcols,
        [{ key: 'nab', label: 'abnormal workers', num: true, fmt: function (v) { return v ? h('span', { class: 'badge bad', text: String(v) }) : '0'; } }]) }));
    add(root, table({ title: 'abnormal_workers', rows: rows.filter(function (r) { return r.abnormal; }), sort: ['diff', -1], empty: 'No worker communicates differently from the others.', placeholder: 'Filter by worker, group or kernel…',
      cols: base.concat([{ key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v, null, true); } },
        { key: 'diff', label: 'different from other workers', num: true }], fcols) }));
  }

  function viewPython(root) {
    add(root, h('h1', { text: 'Python functions' }));
    add(root, howto('Python functions', [
      ['stack "a|b|c"', 'A Python call stack, outermost frame first, frames joined with "|". Its time is what the deepest frame owns, excluding time that overlaps with GPU computation, communication, memory operations and CUDA runtime calls.'],
      ['worker: ratio', 'For each stack, every worker on which it takes more than 1% of the end-to-end time, with that share.']]));
    var py = obj(M.rep['Python functions']);
    if (!py) { add(root, empty('This report has no Python functions section.')); return; }
    var stacks = keys(py).map(function (st) {
      var ws = obj(py[st]) || {};
      var vs = keys(ws).map(function (k) { return ws[k]; }).filter(isNum);
      var fr = st.split('|');
      return { stack: st, leaf: fr[fr.length - 1], depth: fr.length, n: vs.length, max: vs.length ? Math.max.apply(null, vs) : NaN, med: median(vs), ws: ws };
    });
    add(root, h('h2', { text: 'Call tree' }));
    add(root, h('p', { class: 'note', text: 'Stacks merged into a tree. "self" is the stack\'s own share (median over the workers that list it, or the chosen worker\'s); "total" adds its callees. Click ▸ to expand.' }));
    add(root, pyTree(stacks));
    add(root, table({ title: 'Stacks', rows: stacks, sort: ['max', -1], placeholder: 'Filter by frame…',
      cols: [{ key: 'leaf', label: 'deepest frame', fmt: function (v) { return fnName(v); } },
        { key: 'stack', label: 'stack', fmt: function (v) { return fnName(v); } },
        { key: 'depth', label: 'depth', num: true, fmt: String },
        { key: 'n', label: 'workers > 1%', num: true, fmt: String },
        { key: 'med', label: 'median ratio', num: true, fmt: function (v) { return pct(v); } },
        { key: 'max', label: 'max ratio', num: true, fmt: function (v) { return pct(v); } }] }));
    var flat = [];
    stacks.forEach(function (s) { keys(s.ws).forEach(function (w) { flat.push({ leaf: s.leaf, stack: s.stack, worker: w, ratio: s.ws[w] }); }); });
    add(root, table({ title: 'Per worker', rows: flat, page: 25, sort: ['ratio', -1], placeholder: 'Filter by worker or frame…',
      cols: [{ key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'leaf', label: 'deepest frame', fmt: function (v) { return fnName(v); } },
        { key: 'stack', label: 'stack', fmt: function (v) { return fnName(v); } },
        { key: 'ratio', label: 'bottleneck ratio', num: true, fmt: function (v) { return pct(v); } }] }));
  }

  function pyTree(stacks) {
    var rootN = { name: '', kids: {}, order: [], self: 0, total: 0, ws: null, n: 0 };
    var wsel = '';
    stacks.forEach(function (s) {
      var node = rootN;
      s.stack.split('|').forEach(function (f) {
        if (!node.kids[f]) { node.kids[f] = { name: f, kids: {}, order: [], self: 0, total: 0, ws: null, n: 0 }; node.order.push(f); }
        node = node.kids[f];
      });
      node.ws = s.ws;
    });
    function compute(node) {
      var v = 0;
      if (node.ws) {
        if (wsel) v = isNum(node.ws[wsel]) ? node.ws[wsel] : 0;
        else v = median(keys(node.ws).map(function (k) { return node.ws[k]; }));
        node.n = keys(node.ws).length;
      }
      node.self = isNum(v) ? v : 0;
      node.total = node.self;
      node.order.forEach(function (k) { node.total += compute(node.kids[k]); });
      return node.total;
    }
    var box = h('div', { class: 'tree', id: 'py-tree', role: 'tree' });
    var sel = h('select', { 'aria-label': 'worker for the call tree' }, h('option', { value: '', text: 'median over listed workers' }));
    var wl = [];
    stacks.forEach(function (s) { keys(s.ws).forEach(function (w) { if (wl.indexOf(w) < 0) wl.push(w); }); });
    wl.sort(function (a, b) { var x = M.byId[a], y = M.byId[b]; return (x ? x.index : 1e9) - (y ? y.index : 1e9) || collator.compare(a, b); });
    wl.forEach(function (w) { sel.appendChild(h('option', { value: w, text: w })); });
    var expandAll = h('button', { type: 'button', class: 'btn', text: 'Expand all' });
    var collapse = h('button', { type: 'button', class: 'btn', text: 'Collapse' });
    var body = h('div');
    var scale = 1;
    var openSet = new Set();
    function row(node, depth, path) {
      var kids = node.order.map(function (k) { return node.kids[k]; }).sort(function (a, b) { return b.total - a.total; });
      var open = openSet.has(path);
      var tog = h('span', { class: 'tog', text: kids.length ? (open ? '▾' : '▸') : '' });
      var r = h('div', { class: 'tree-row', role: 'treeitem', 'aria-expanded': kids.length ? String(open) : null, 'aria-level': depth + 1 },
        h('div', { class: 'name', title: node.name, style: 'padding-left:' + (depth * 14) + 'px' }, tog, node.name),
        h('div', { class: 'num', text: node.ws ? pct(node.self) : '' }),
        h('div', { class: 'num', text: pct(node.total) }),
        h('div', { class: 'num', text: node.ws ? String(node.n) : '' }),
        h('div', { class: 'bar' }, h('span', { style: 'width:' + Math.max(0, Math.min(100, node.total / scale * 100)).toFixed(1) + '%' })));
      var frag = [r];
      if (kids.length) {
        tog.addEventListener('click', function () { if (open) openSet.delete(path); else openSet.add(path); render(); });
        if (open) kids.forEach(function (k) { frag = frag.concat(row(k, depth + 1, path + '|' + k.name)); });
      }
      return frag;
    }
    function render() {
      compute(rootN);
      scale = 0;
      rootN.order.forEach(function (k) { scale = Math.max(scale, rootN.kids[k].total); });
      scale = scale || 1;
      body.textContent = '';
      var tops = rootN.order.map(function (k) { return rootN.kids[k]; }).sort(function (a, b) { return b.total - a.total; });
      tops.forEach(function (n) { add(body, row(n, 0, n.name)); });
      if (!tops.length) body.appendChild(empty('No Python stack above the threshold.'));
    }
    function walk(node, path, fn) { node.order.forEach(function (k) { var p = path ? path + '|' + k : k; fn(p, node.kids[k]); walk(node.kids[k], p, fn); }); }
    expandAll.addEventListener('click', function () { walk(rootN, '', function (p, n) { if (n.order.length) openSet.add(p); }); render(); });
    collapse.addEventListener('click', function () { openSet.clear(); render(); });
    sel.addEventListener('change', function () { wsel = sel.value; render(); });
    /* open the heaviest path by default so the tree shows something useful */
    compute(rootN);
    var node = rootN, path = '';
    while (node.order.length) {
      var best = node.order.map(function (k) { return node.kids[k]; }).sort(function (a, b) { return b.total - a.total; })[0];
      path = path ? path + '|' + best.name : best.name;
      if (best.order.length) openSet.add(path);
      node = best;
    }
    add(box, [h('div', { class: 'tbl-bar' }, h('span', { class: 'tbl-title', text: 'Python call tree' }), sel, expandAll, collapse),
      h('div', { class: 'tree-row head' }, h('div', { text: 'frame' }), h('div', { class: 'num', text: 'self' }), h('div', { class: 'num', text: 'total' }), h('div', { class: 'num', text: 'workers' }), h('div')), body]);
    render();
    return box;
  }

  function viewHeatmap(root) {
    var H = M.heat;
    add(root, h('h1', { text: 'Worker × function heatmap' }));
    add(root, howto('the heatmap', [
      ['cell colour', 'How far the worker\'s value for the function is from the median of all workers, as a relative deviation: red is more time than the median (up to +100% and beyond), blue is less, white is typical. Grey: the worker has no value for the function.'],
      ['value', H.exact ? 'The per-function value the report carries for the heatmap: ' + H.metric + '.' : 'This report carries no per-function values for every worker, so the matrix comes from the sections, which list a worker only above their thresholds: only abnormal cells are known.'],
      ['rows and columns', 'Rows are workers, columns functions ordered by their median value. By default the rows are sorted by how much time they spend above the medians (the sum over functions of value minus median), so the workers that lose the most come first; scroll or zoom with the slider.']]));
    if (!H.funcs.length || !H.rows.length) { add(root, empty('Nothing to draw: the report carries no per-worker values.')); return; }
    var nf = H.funcs.length, nr = H.rows.length;
    var dev = [];
    var rowExcess = new Array(nr).fill(0);   // sum over functions of the value above the median
    var i, j;
    for (i = 0; i < nr; i++) {
      var rv = H.vals[i] || [];
      for (j = 0; j < nf; j++) {
        var v = rv[j];
        if (isNum(v) && isNum(H.med[j]) && H.med[j] > 0) {
          var d = v / H.med[j] - 1;
          dev.push([j, i, d, v]);
          if (v > H.med[j]) rowExcess[i] += v - H.med[j];
        }
      }
    }
    var orderSel = h('select', { 'aria-label': 'row order' }, h('option', { value: 'dev', text: 'most above the median first' }), h('option', { value: 'rank', text: 'by rank' }));
    var classSel = h('select', { 'aria-label': 'function class' }, h('option', { value: '', text: 'all classes' }));
    var present = [];
    H.funcs.forEach(function (f) { if (f.cls && present.indexOf(f.cls) < 0) present.push(f.cls); });
    present.forEach(function (c) { classSel.appendChild(h('option', { value: c, text: c })); });
    var vis = Math.min(nr, 60);
    var el = h('div', { class: 'chart', id: 'chart-heat', style: 'height:' + (140 + vis * (nr <= 20 ? 26 : 12)) + 'px' });
    add(root, h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: nr + ' workers × ' + nf + ' functions' }),
      h('div', { class: 'ctl' }, 'rows: ', orderSel, ' functions: ', classSel)), el));
    var c = null;
    function draw() {
      var order = [];
      for (i = 0; i < nr; i++) order.push(i);
      var wIndex = function (id) { var w = M.byId[id]; return w ? w.index : 1e9; };
      if (orderSel.value === 'dev') order.sort(function (a, b) { return rowExcess[b] - rowExcess[a] || a - b; });
      else order.sort(function (a, b) { return wIndex(H.rows[a]) - wIndex(H.rows[b]) || a - b; });
      var pos = new Array(nr);
      order.forEach(function (r, p) { pos[r] = p; });
      var cols = [];
      for (j = 0; j < nf; j++) if (!classSel.value || H.funcs[j].cls === classSel.value) cols.push(j);
      var cpos = {};
      cols.forEach(function (cj, p) { cpos[cj] = p; });
      var data = [];
      dev.forEach(function (d) { if (d[0] in cpos) data.push([cpos[d[0]], pos[d[1]], Math.max(-1, Math.min(1, d[2])), d[3], d[2]]); });
      var axisName = function (k) { var t = shortName(k); return t.length > 28 ? t.slice(0, 16) + '…' + t.slice(-11) : t; };
      var yNames = order.map(function (r) { var w = M.byId[H.rows[r]]; return w && w.rank != null ? 'rank ' + w.rank : H.rows[r]; });
      var opt = {
        grid: { left: 90, right: nr > 60 ? 110 : 80, top: 10, bottom: 120 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var r = order[p.value[1]], fj = cols[p.value[0]];
          var w = M.byId[H.rows[r]] || { id: H.rows[r], rank: null };
          return tipWorker(w, [H.funcs[fj].key.length > 300 ? H.funcs[fj].key.slice(0, 300) + '…' : H.funcs[fj].key,
            'value ' + num(p.value[3]) + ' (' + H.metric + ')', 'median ' + num(H.med[fj]), 'deviation ' + signedPct(p.value[4]),
            'row total above the medians ' + num(rowExcess[r])]);
        } },
        xAxis: { type: 'category', data: cols.map(function (cj) { return axisName(H.funcs[cj].key); }), axisLabel: { rotate: 40, interval: 0, fontSize: 10 }, splitArea: { show: false } },
        yAxis: { type: 'category', data: yNames, inverse: true, axisLabel: { fontSize: 10 } },
        visualMap: { type: 'continuous', min: -1, max: 1, dimension: 2, calculable: false, orient: 'vertical', right: 4, top: 'middle', itemHeight: 160,
          text: ['+100%', '−100%'], inRange: { color: ['#2166ac', '#92c5de', '#f7f7f7', '#f4a582', '#b2182b'] } },
        dataZoom: nr > 60 ? [{ type: 'slider', yAxisIndex: 0, right: 6, width: 14, startValue: 0, endValue: 59, showDetail: false }, { type: 'inside', yAxisIndex: 0 }] : [],
        series: [{ type: 'heatmap', data: data, progressive: 0, emphasis: { itemStyle: { borderColor: '#000', borderWidth: 1 } } }]
      };
      if (nr > 60) opt.visualMap.right = 30;
      if (!c) {
        c = chart(el, opt);
        if (c) c.on('click', function (p) { var id = H.rows[order[p.value[1]]]; if (id) location.hash = '#worker/' + encodeURIComponent(id); });
      } else c.setOption(opt, true);
    }
    orderSel.addEventListener('change', draw);
    classSel.addEventListener('change', draw);
    queue(draw);
    var list = [];
    dev.forEach(function (d) { if (Math.abs(d[2]) >= 0.2) list.push({ worker: H.rows[d[1]], fn: H.funcs[d[0]].key, cls: H.funcs[d[0]].cls, v: d[3], med: H.med[d[0]], dev: d[2] }); });
    add(root, table({ title: 'Cells at least 20% from the median', rows: list, page: 25, sort: ['dev', -1], placeholder: 'Filter by worker or function…', empty: 'Every value is within 20% of its median.',
      cols: [{ key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'fn', label: 'function', fmt: function (v) { return fnName(v); } },
        { key: 'cls', label: 'class' },
        { key: 'v', label: 'value', num: true, fmt: function (v) { return heatFmt(v); } }, { key: 'med', label: 'median', num: true, fmt: function (v) { return heatFmt(v); } },
        { key: 'dev', label: 'deviation', num: true, fmt: signedPct }] }));
  }

  function jsonTree(v, depth) {
    if (Array.isArray(v)) {
      if (v.length && v.every(function (x) { return typeof x === 'string' && M.byId[x]; }))
        return h('span', null, v.slice(0, 50).map(function (x) { return workerLink(x); }), v.length > 50 ? ' and ' + (v.length - 50) + ' more' : null);
      var ul = h('ul');
      v.slice(0, 500).forEach(function (x, i) { ul.appendChild(h('li', null, h('span', { class: 'k', text: '[' + i + '] ' }), jsonTree(x, depth + 1))); });
      if (v.length > 500) ul.appendChild(h('li', { class: 'muted', text: '… ' + (v.length - 500) + ' more' }));
      return ul;
    }
    if (v && typeof v === 'object') {
      var ul2 = h('ul');
      keys(v).forEach(function (k) { ul2.appendChild(h('li', null, h('span', { class: 'k', text: k + ': ' }), jsonTree(v[k], depth + 1))); });
      return ul2;
    }
    if (typeof v === 'string') return M.byId[v] ? workerLink(v) : h('span', { class: 's', text: v.indexOf('|') > 0 ? v.split('|').join('\n  ↳ ') : v });
    return h('span', { class: 'n', text: String(v) });
  }

  /* The "Hang" section (docs/hang.md): the verdict, the groups of workers
     by where their training thread is, side by side with the suspects
     first, each worker's state and last step, then the remaining fields. */
  function viewHang(root) {
    var hg = M.hang || {};
    add(root, h('h1', { text: 'Hang' }));
    add(root, howto('the hang section', [
      ['hung', 'true when a live worker made no step for the hang timeout (--hang-timeout of the trigger or of hang-check) while PerfTracker was watching.'],
      ['groups', 'Workers grouped by where their training thread is: its Python stack, outermost frame first, file and function names only. Suspects come first: a group smaller than the largest, a dead worker, a worker behind the others. The others usually wait for them in a collective.'],
      ['workers', 'Every worker: hung, running, dead (process gone), lost (no heartbeat) or exited; its last step and the seconds since; where its stack ends (file:line).']]));
    add(root, h('div', { class: 'banner ' + (hg.hung ? 'bad' : 'ok') }, h('b', { text: hg.hung ? 'The job is hung.' : 'The job is not hung.' }), hg.explanation ? ' ' + String(hg.explanation) : ''));
    var sus = (Array.isArray(hg.suspect_workers) ? hg.suspect_workers : Array.isArray(hg.suspects) ? hg.suspects : []).map(String);
    var susSet = {};
    sus.forEach(function (x) { susSet[x] = 1; });
    if (sus.length) add(root, h('p', { id: 'hang-suspects' }, h('b', { text: plural(sus.length, 'suspect') + ': ' }), sus.map(function (x) { return workerLink(x, 'bad'); })));
    var groups = (Array.isArray(hg.groups) ? hg.groups.filter(obj) : []).map(function (g, i) {
      var ws = Array.isArray(g.workers) ? g.workers.map(String) : [];
      var s = !!g.suspect || ws.some(function (x) { return susSet[x]; });
      return { g: g, ws: ws, s: s, i: i };
    });
    groups.sort(function (a, b) { return (b.s ? 1 : 0) - (a.s ? 1 : 0) || a.i - b.i; });
    if (groups.length) {
      add(root, h('h2', { text: 'Where the workers are' }));
      var row = h('div', { class: 'hang-groups', id: 'hang-groups', style: 'display:flex;gap:12px;align-items:flex-start;overflow-x:auto;padding-bottom:6px;margin-bottom:16px' });
      groups.forEach(function (o) {
        var g = o.g, n = isNum(g.count) ? g.count : o.ws.length;
        var frames = g.stack != null && String(g.stack) !== '' ? String(g.stack).split('|') : [];
        var fn = g['function'] != null ? String(g['function']) : '';
        var steps = Array.isArray(g.steps) && g.steps.length === 2 ? (g.steps[0] === g.steps[1] ? 'step ' + g.steps[0] : 'steps ' + g.steps[0] + '–' + g.steps[1]) : '';
        add(row, h('div', { class: 'card hang-group' + (o.s ? ' suspect' : ''), 'data-suspect': o.s ? '1' : '0',
          style: 'flex:1 1 0;min-width:240px;max-width:560px;margin:0' + (o.s ? ';border-color:#ff8182;box-shadow:0 0 0 1px #ff8182' : '') },
          h('div', { style: 'display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin-bottom:4px' },
            o.s ? h('span', { class: 'badge bad', text: 'suspect' }) : null, h('b', { text: plural(n, 'worker') }),
            steps ? h('span', { class: 'muted', text: steps }) : null),
          h('div', null, o.ws.slice(0, 12).map(function (x) { return workerLink(x, susSet[x] ? 'bad' : ''); }), o.ws.length > 12 ? ' and ' + (o.ws.length - 12) + ' more' : null),
          fn ? h('div', { class: 'hang-fn', style: 'margin-top:6px' }, 'in ', h('code', { text: fn })) : null,
          frames.length ? h('ol', { class: 'hang-stack', title: 'outermost frame first', style: 'font-family:monospace;font-size:12px;margin:8px 0 0;padding-left:24px;word-break:break-all' },
            frames.map(function (f, k) { return h('li', { text: f, style: (k === frames.length - 1 ? 'font-weight:600' : '') + (f === fn ? ';color:var(--bad)' : '') }); }))
            : h('div', { class: 'muted', text: '(no Python frame)' })));
      });
      add(root, row);
    }
    var wobj = obj(hg.workers);
    if (wobj) {
      var rows = keys(wobj).map(function (id) {
        var w = obj(wobj[id]) || {};
        return { id: id, rank: w.rank, state: w.state != null ? String(w.state) : '', step: w['last step'], since: w['seconds since last step'],
          fn: w['function'] != null ? String(w['function']) : '', where: w.where != null ? String(w.where) : '', stacks: w.stacks != null ? String(w.stacks) : '', sus: susSet[id] ? 1 : 0 };
      });
      add(root, table({ title: 'Workers', rows: rows, sort: ['sus', -1], cls: 'hang-workers', rowClass: function (r) { return r.sus ? 'hl' : null; },
        cols: [{ key: 'id', label: 'worker', fmt: function (v, r) { return workerLink(v, r.sus ? 'bad' : ''); } },
          { key: 'sus', label: 'suspect', num: true, fmt: function (v) { return v ? 'yes' : ''; } },
          { key: 'rank', label: 'rank', num: true, fmt: String },
          { key: 'state', label: 'state' },
          { key: 'step', label: 'last step', num: true, fmt: String },
          { key: 'since', label: 's since last step', num: true, fmt: function (v) { return isNum(v) ? v.toFixed(1) : '–'; } },
          { key: 'fn', label: 'function' },
          { key: 'where', label: 'where', fmt: function (v) { return h('code', { text: v }); } },
          { key: 'stacks', label: 'stacks' }] }));
    }
    var rest = {};
    keys(hg).forEach(function (k) { if (['groups', 'explanation', 'workers', 'suspect_workers', 'suspects', 'hung'].indexOf(k) < 0) rest[k] = hg[k]; });
    if (keys(rest).length) {
      add(root, h('h2', { text: 'Other fields' }));
      add(root, h('div', { class: 'card jtree' }, jsonTree(rest, 0)));
    }
  }

  /* ----------------------------------------------------------- hardware */
  /* display.hw (docs/hardware.md, "Timelines"): each chosen worker's
     hardware series, t_ms from its window start.  The window is shaded and
     its steps marked, so what the hardware did lines up with what ran.
     One chart per unit; series names are text (tooltips escape them). */
  var HW_UNITS = [
    ['%', 'Utilization and pressure', '%', 1],
    ['B/s', 'Throughput: NVLink, PCIe, NIC, InfiniBand', 'GB/s', 1e-9],
    ['MHz', 'SM clock', 'MHz', 1],
    ['W', 'Power', 'W', 1],
    ['C', 'Temperature', '°C', 1],
    ['B', 'Available memory', 'GiB', 1 / 1073741824],
    ['', 'Clock throttle reasons (NVML bitmask; bit 0 = idle)', '', 1]
  ];
  function hwData() {
    var d = obj(M.rep.display), hw = d && obj(d.hw);
    return hw && obj(hw.workers) && keys(hw.workers).length ? hw : null;
  }
  function hwName(s) {
    var n = String(s.name);
    if (n === 'cpu_util' && s.device === -1) return 'cpu_util (all cores)';
    if (isNum(s.device) && s.device >= 0) n += ' gpu' + s.device;
    if (s.label) n += ' ' + s.label;
    return n;
  }
  function hwCharts(wrap, id, hw) {
    wrap.textContent = '';
    var w = M.byId[id] || { id: id, rank: hw.rank, host: hw.host };
    var series = Array.isArray(hw.series) ? hw.series.filter(obj) : [];
    var win = isNum(hw.window_ms) ? hw.window_ms : null;
    var steps = [], acc = 0;
    (w.stepMs || []).forEach(function (s) { if (isNum(s)) { acc += s; steps.push(acc); } });
    add(wrap, h('p', { class: 'note' }, 'Worker ', workerLink(id), (hw.host ? ' on ' + hw.host : '') +
      ' · source ' + (hw.source || '?') + ' · time in ms from the start of its profiled window' +
      (win != null ? ' (' + ms(win) + ', shaded' + (steps.length > 1 ? '; dashed lines end its steps' : '') + ')' : '') + '.'));
    if (hw.note) add(wrap, h('div', { class: 'banner warn' }, h('b', { text: 'Not sampled: ' }), String(hw.note)));
    if (!series.length) { add(wrap, empty('No series for this worker.')); return; }
    HW_UNITS.forEach(function (u, ui) {
      var mine = series.filter(function (s) { return String(s.unit || '') === u[0] && Array.isArray(s.t_ms) && Array.isArray(s.v); });
      if (!mine.length) return;
      var el = h('div', { class: 'chart', id: 'chart-hw-' + ui, style: 'height:' + (ui < 2 ? 260 : 200) + 'px' });
      add(wrap, h('div', { class: 'chart-card', 'data-unit': u[0] }, h('div', { class: 'hd' }, h('h3', { text: u[1] + (u[2] ? ' (' + u[2] + ')' : '') })), el));
      var marks = steps.slice(0, -1).map(function (x) { return { xAxis: x }; });
      var opt = {
        grid: { left: 64, right: 16, top: 34, bottom: 40 },
        legend: { type: 'scroll', top: 0, textStyle: { fontSize: 11 } },
        tooltip: { trigger: 'axis', confine: true, formatter: function (ps) {
          var out = ps.length ? esc(num(ps[0].value[0])) + ' ms' : '';
          ps.forEach(function (p) {
            var v = p.value[1];
            out += '<br>' + p.marker + esc(p.seriesName) + ': ' + (v == null ? '–' : u[0] === '' ? '0x' + Math.round(v).toString(16) : esc(num(v)) + ' ' + esc(u[2]));
          });
          return out;
        } },
        xAxis: { type: 'value', name: 'ms from window start', nameLocation: 'middle', nameGap: 24, scale: true },
        yAxis: { type: 'value', scale: u[0] !== '%', max: u[0] === '%' ? 100 : null, min: u[0] === '%' ? 0 : null },
        dataZoom: [{ type: 'inside', xAxisIndex: 0 }],
        series: mine.map(function (s, i) {
          var data = [], k;
          for (k = 0; k < s.t_ms.length && k < s.v.length; k++)
            data.push([s.t_ms[k], isNum(s.v[k]) ? s.v[k] * u[3] : null]);
          var o = { type: 'line', name: hwName(s), showSymbol: data.length < 40, symbolSize: 4, step: u[0] === '' ? 'end' : false,
            connectNulls: false, sampling: 'lttb', lineStyle: { width: 1.5 }, data: data };
          if (i === 0 && win != null) {
            o.markArea = { silent: true, itemStyle: { color: 'rgba(9,105,218,0.07)' }, data: [[{ xAxis: 0 }, { xAxis: win }]] };
            if (marks.length) o.markLine = { silent: true, symbol: 'none', label: { show: false }, lineStyle: { color: '#8c959f', type: 'dashed' }, data: marks };
          }
          return o;
        })
      };
      chart(el, opt);
    });
  }
  function viewHardware(root) {
    var hw = hwData();
    add(root, h('h1', { text: 'Hardware' }));
    add(root, howto('hardware timelines', [
      ['what', 'What the node agent sampled while each worker was profiled: GPU utilization, SM clock, power, temperature and throttle reasons (NVML), NVLink and PCIe throughput, NIC and InfiniBand throughput, CPU, memory and pressure (/proc, /sys).'],
      ['how to read', 'A slow worker whose link throughput stays low while its communication kernels run waits for a peer; a busy link at capacity is the bottleneck. Low SM clock with throttle reasons set points at power or thermal limits.'],
      ['which workers', 'Those the findings name first, then one per host, then the rest by rank (at most 16; ' + (isNum(hw.workers_with_samples) ? hw.workers_with_samples : '?') + ' had samples).']]));
    var ids = keys(hw.workers);
    var pick = ids[0];
    M.findings.some(function (f) {
      var hit = (Array.isArray(f.workers) ? f.workers : []).filter(function (x) { return ids.indexOf(x) >= 0; })[0];
      if (hit) pick = hit;
      return !!hit;
    });
    var sel = h('select', { 'aria-label': 'worker' });
    ids.forEach(function (id) {
      var r = obj(hw.workers[id]) || {};
      sel.appendChild(h('option', { value: id, text: (isNum(r.rank) ? 'rank ' + r.rank + ' · ' : '') + id + (r.host ? ' (' + r.host + ')' : '') }));
    });
    var wrap = h('div', { class: 'hw-charts' });
    /* #hardware?q=<worker id> selects a worker (the route's filter hook). */
    var ctl = h('div', { class: 'tbl-wrap hw-ctl' }, h('label', null, 'Worker: ', sel));
    function show(id) {
      if (!(id in hw.workers)) return;
      sel.value = id;
      charts = charts.filter(function (c) { if (wrap.contains(c.getDom())) { c.dispose(); return false; } return true; });
      hwCharts(wrap, id, obj(hw.workers[id]) || {});
    }
    ctl._setFilter = function (q) { show(String(q || '')); };
    sel.addEventListener('change', function () { show(sel.value); });
    add(root, ctl);
    add(root, wrap);
    show(pick);
  }


  /* ------------------------------------------------------------ compare */
  /* The "Compare" section (`perftracker compare`, docs/compare.md): the
     summary sentence, both sides' step times, a waterfall from BASELINE's
     step to NEW's through the functions that changed, the class table and
     the ranked findings.  A compare report has no other section, so the
     page shows this view alone. */
  var CHANGE_COLOR = { slower: '#cf222e', appeared: '#cf222e', faster: '#1a7f37', disappeared: '#1a7f37', other: '#8c959f' };
  function signedMs(x) { return isNum(x) ? (x >= 0 ? '+' : '') + ms(x) : '–'; }
  function compareSide(c, key, label) {
    var s = obj(c[key]) || {}, st = obj(s.step_ms) || {};
    return stat(label + ' step time (median)', ms(st.median),
      'p10 ' + ms(st.p10) + ' · p90 ' + ms(st.p90) + ' · noise ' + ms(s.noise_ms) + ' · ' +
      plural(isNum(s.steps) ? s.steps : 0, 'step') + ' on ' + plural(isNum(s.workers) ? s.workers : 0, 'worker') +
      (s.failed ? ' · ' + s.failed + ' unreadable' : ''));
  }
  function compareStepChart(c) {
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: 'Step time per worker, both runs' })),
      legend([['#8c959f', 'BASELINE'], ['#4e79a7', 'NEW'], ['#24292f', 'each step', ';border-radius:5px']]));
    var ws = (Array.isArray(c.workers) ? c.workers : []).filter(obj);
    if (!ws.length) { card.appendChild(empty('No step times in this comparison.')); return card; }
    var el = h('div', { class: 'chart', id: 'chart-cmp-steps' });
    card.appendChild(el);
    /* one category per rank (or per worker when ranks are unknown) */
    var cats = [], idx = Object.create(null);
    function catOf(w) { return w.rank != null ? 'rank ' + w.rank : w.side + ': ' + w.id; }
    ws.forEach(function (w) { var k = catOf(w); if (!(k in idx)) { idx[k] = cats.length; cats.push(k); } });
    queue(function () {
      var series = ['baseline', 'new'].map(function (side) {
        var data = cats.map(function () { return null; });
        ws.forEach(function (w) { if (w.side === side) data[idx[catOf(w)]] = isNum(w.step_ms) ? w.step_ms : null; });
        return { name: side === 'new' ? 'NEW' : 'BASELINE', type: 'bar', barMaxWidth: 22, progressive: 0,
          itemStyle: { color: side === 'new' ? '#4e79a7' : '#8c959f' }, data: data };
      });
      var pts = [];
      ws.forEach(function (w) { (Array.isArray(w.steps) ? w.steps : []).forEach(function (v) { if (isNum(v)) pts.push([idx[catOf(w)], v, w.side]); }); });
      series.push({ name: 'steps', type: 'scatter', symbolSize: 4, progressive: 0, z: 3, itemStyle: { color: '#24292f' }, data: pts });
      chart(el, {
        grid: { left: 60, right: 16, top: 16, bottom: cats.length > 6 ? 70 : 40 },
        tooltip: { trigger: 'item', formatter: function (p) {
          if (p.seriesName === 'steps') return esc((p.value[2] === 'new' ? 'NEW' : 'BASELINE') + ' · ' + cats[p.value[0]] + ': ' + ms(p.value[1]));
          return esc(p.seriesName + ' · ' + cats[p.dataIndex] + ': median step ' + ms(p.value));
        } },
        xAxis: { type: 'category', data: cats, axisLabel: { interval: cats.length <= 24 ? 0 : 'auto', rotate: cats.length > 6 ? 30 : 0, width: 110, overflow: 'truncate' } },
        yAxis: { type: 'value', name: 'ms' },
        series: series
      });
    });
    return card;
  }
  function compareWaterfall(c) {
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: 'Where the difference goes (ms per step)' })),
      legend([['#8c959f', 'step time'], ['#cf222e', 'slower / new'], ['#1a7f37', 'faster / gone']]));
    var bars = (Array.isArray(c.waterfall) ? c.waterfall : []).filter(function (b) { return obj(b) && isNum(b.delta_ms); });
    var sb = obj(obj(c.baseline) && c.baseline.step_ms) || {}, sn = obj(obj(c.new) && c.new.step_ms) || {};
    if (!isNum(sb.median) || !isNum(sn.median)) { card.appendChild(empty('No step times in this comparison.')); return card; }
    var el = h('div', { class: 'chart', id: 'chart-cmp-waterfall', style: 'height:380px' });
    card.appendChild(el);
    queue(function () {
      var cats = ['BASELINE'], base = [0], val = [{ value: sb.median, itemStyle: { color: '#8c959f' } }], at = sb.median;
      bars.forEach(function (b) {
        var lo = Math.min(at, at + b.delta_ms);
        cats.push(String(b.label || ''));
        base.push(lo);
        val.push({ value: Math.abs(b.delta_ms), delta: b.delta_ms, itemStyle: { color: CHANGE_COLOR[b.change] || (b.delta_ms >= 0 ? '#cf222e' : '#1a7f37') } });
        at += b.delta_ms;
      });
      cats.push('NEW');
      base.push(0);
      val.push({ value: sn.median, itemStyle: { color: '#4e79a7' } });
      /* a window around the steps so that a 1% difference is visible */
      var lo = Math.min.apply(null, base.slice(1, -1).concat([sb.median, sn.median]));
      var hi = Math.max(sb.median, sn.median, at);
      var pad = Math.max((hi - lo) * 0.5, 0.02 * hi);
      var ymin = Math.max(0, lo - pad);
      var tick = Math.pow(10, Math.floor(Math.log10(Math.max(hi - ymin, 1e-3))));
      ymin = Math.floor(ymin / tick) * tick;
      chart(el, {
        grid: { left: 60, right: 16, top: 16, bottom: 110 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var d = val[p.dataIndex];
          if (p.seriesName !== 'delta') return '';
          return esc(cats[p.dataIndex] + ': ' + (d.delta != null ? signedMs(d.delta) + ' per step' : ms(d.value) + ' per step'));
        } },
        xAxis: { type: 'category', data: cats, axisLabel: { interval: 0, rotate: 30, width: 160, overflow: 'truncate' } },
        yAxis: { type: 'value', name: 'ms', min: ymin },
        series: [
          { name: 'base', type: 'bar', stack: 'w', silent: true, itemStyle: { color: 'transparent' }, data: base.map(function (b, i) { return i === 0 || i === base.length - 1 ? ymin : b; }) },
          { name: 'delta', type: 'bar', stack: 'w', barMaxWidth: 40, progressive: 0,
            data: val.map(function (v, i) { return i === 0 || i === val.length - 1 ? { value: v.value - ymin, itemStyle: v.itemStyle } : v; }) }
        ]
      });
    });
    return card;
  }
  function viewCompare(root) {
    var c = obj(M.rep.Compare);
    add(root, h('h1', { text: 'NEW run compared with BASELINE' }));
    if (!c) { add(root, empty('This report has no Compare section.')); return; }
    var f = (Array.isArray(c.findings) ? c.findings : []).filter(obj);
    add(root, h('div', { class: 'banner ' + (c.unrelated ? 'warn' : f.length ? 'warn' : 'ok'), id: 'compare-summary' }, String(c.summary || '')));
    add(root, h('div', { class: 'stats' },
      compareSide(c, 'baseline', 'BASELINE'), compareSide(c, 'new', 'NEW'),
      stat('NEW / BASELINE', isNum(c.ratio) ? c.ratio.toFixed(2) + 'x' : '–', signedMs(c.delta_ms) + ' per step'),
      stat('Findings', String(f.length), 'changes above ' + ms(c.threshold_ms) + ' per step · workers ' +
        (c.pairing === 'rank' ? 'paired by rank' : 'compared as populations'))));
    add(root, h('div', { class: 'note' }, 'BASELINE: ' + String((obj(c.baseline) || {}).path || '') + ' · NEW: ' + String((obj(c.new) || {}).path || '')));
    add(root, howto('the comparison', [
      ['ms per step', 'The time a function owns per profiled step (class priority rule: compute > communication > memory > runtime > Python), so the changes add up to the change of the step time.'],
      ['noise', 'Each run\'s own step-to-step spread; a change below it (or below 0.5% of BASELINE\'s step) is not a finding.'],
      ['ranks', 'With ranks on both sides, workers are paired by rank and a change on a few ranks is listed with them; otherwise the two runs\' medians are compared.']]));
    add(root, h('div', { class: 'grid2' }, compareStepChart(c), compareWaterfall(c)));
    add(root, h('h2', { text: 'Findings' }));
    add(root, f.length ? table({ title: 'Compare findings', rows: f, sort: ['rank', 1], cols: [
      { key: 'rank', label: '#', num: true, fmt: function (v) { return String(v); } },
      { key: 'change', label: 'change' },
      { key: 'name', label: 'function', title: 'kernels by name, Python/CPU functions by stack (last frame shown), collectives by group', fmt: function (v, r) { return h('span', { title: String(r.function || v), text: String(v) }); } },
      { key: 'class', label: 'class' },
      { key: 'who', label: 'workers', get: function (r) { return Array.isArray(r.ranks) ? r.ranks.map(function (x) { return 'rank ' + x; }).join(', ') : 'all'; } },
      { key: 'baseline_ms', label: 'BASELINE ms/step', num: true, fmt: function (v) { return ms(v); } },
      { key: 'new_ms', label: 'NEW ms/step', num: true, fmt: function (v) { return ms(v); } },
      { key: 'delta_ms', label: 'change', num: true, fmt: function (v) { return signedMs(v); } },
      { key: 'share', label: 'share of difference', num: true, fmt: function (v) { return isNum(v) ? pct(v, 0) : '–'; } },
      { key: 'explanation', label: 'what changed' }] })
      : empty(c.unrelated ? 'The runs have too little in common to compare function by function.' : 'No function changed beyond the noise.'));
    add(root, h('h2', { text: 'By class (ms per step)' }));
    add(root, table({ title: 'Compare classes', rows: (Array.isArray(c.classes) ? c.classes : []).filter(obj), cols: [
      { key: 'class', label: 'class' },
      { key: 'baseline_ms', label: 'BASELINE', num: true, fmt: function (v) { return ms(v); } },
      { key: 'new_ms', label: 'NEW', num: true, fmt: function (v) { return ms(v); } },
      { key: 'delta_ms', label: 'change', num: true, fmt: function (v) { return signedMs(v); } },
      { key: 'share', label: 'share of difference', num: true, fmt: function (v) { return isNum(v) ? pct(v, 0) : '–'; } }] }));
  }
  function compareViews() {
    return [{ id: 'compare', label: 'Compare', fn: viewCompare, count: function () { return (obj(M.rep.Compare).findings || []).length; } }];
  }

  /* ------------------------------------------------------------ routing */

  /* ---- One worker's time (issue 10): "Time breakdown" and "Steps" ------
     Kept in their own functions: where each worker's GPU time goes
     (compute, communication not overlapped with compute, memory, idle and
     the idle time by cause) and the per-step view (each step against the
     worker's median step, the function its extra time is in). */
  var K_TB = 'Time breakdown', K_STEPS = 'Steps';
  var TB_PARTS = [['compute (ms)', 'compute', '#4e79a7'], ['communication not overlapped (ms)', 'communication not overlapped with compute', '#f28e2b'],
    ['memory (ms)', 'memory operations', '#76b7b2'], ['idle (ms)', 'idle', '#d0d7de']];
  var TB_CAUSES = [['blocking sync', '#cf222e'], ['data loader', '#b07aa1'], ['kernel launch', '#edc948'], ['other host work', '#9c755f'], ['no CPU activity', '#bab0ac']];
  function tbRows() {
    var tb = obj(M.rep[K_TB]) || {};
    return keys(tb).map(function (id) { var r = obj(tb[id]) || {}; r = Object.assign({ id: id }, r); return r; });
  }
  function tbChart(rows, parts, id, title, getv) {
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: title })),
      legend(parts.map(function (p) { return [p[p.length - 1], p.length > 2 ? p[1] : p[0]]; })));
    if (!rows.length) { card.appendChild(empty('No worker has this data.')); return card; }
    var el = h('div', { class: 'chart', id: id });
    card.appendChild(el);
    queue(function () {
      chart(el, {
        grid: { left: 60, right: 16, top: 16, bottom: rows.length > 64 ? 56 : 40 },
        tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
        xAxis: { type: 'category', data: rows.map(function (r) { var w = M.byId[r.id]; return w && w.rank != null ? String(w.rank) : r.id; }), name: 'rank', nameLocation: 'middle', nameGap: 24 },
        yAxis: { type: 'value', name: 'ms' },
        dataZoom: zoomFor(rows.length),
        series: parts.map(function (p) { return { type: 'bar', stack: 'all', barMaxWidth: 32, name: p.length > 2 ? p[1] : p[0], itemStyle: { color: p[p.length - 1] }, data: rows.map(function (r) { return getv(r, p[0]); }) }; })
      });
    });
    return card;
  }
  function viewBreakdown(root) {
    var rows = tbRows();
    add(root, h('h1', { text: 'Where each worker\'s GPU time goes' }));
    add(root, howto('Time breakdown', [
      ['GPU busy', 'Share of the window with at least one kernel running, compute or communication (the seed\'s "GPU utilization", what NVML reports).'],
      ['GPU compute utilization', 'Share of the window with at least one compute kernel running: communication kernels that only wait for peers do not count.'],
      ['compute · communication not overlapped · memory · idle', 'The window split on the GPU, in that priority: communication counts only where no compute kernel runs beside it.'],
      ['idle by cause', 'What the thread that launches kernels was doing while the GPU was idle: a blocking sync (cudaStreamSynchronize, .item(), .cpu()), the data loader, a kernel launch, other host work, or nothing recorded.'],
      ['CPU functions during idle', 'The most specific call stacks of that thread holding at least 5% of the idle time.']]));
    add(root, h('div', { class: 'grid2' },
      tbChart(rows, TB_PARTS, 'chart-tb-split', 'GPU time by class', function (r, k) { return isNum(r[k]) ? r[k] : 0; }),
      tbChart(rows, TB_CAUSES, 'chart-tb-idle', 'GPU idle time by cause', function (r, k) { var c = obj(r['idle by cause (ms)']) || {}; return isNum(c[k]) ? c[k] : 0; })));
    add(root, table({ title: 'Time breakdown per worker', rows: rows, sort: ['idle', -1], placeholder: 'Filter by worker…', cols: [
      { key: 'id', label: 'worker', fmt: function (v) { return workerLink(v); } },
      { key: 'busy', label: 'GPU busy', num: true, get: function (r) { return r['GPU busy']; }, fmt: function (v) { return pct(v, 1); } },
      { key: 'cu', label: 'GPU compute utilization', num: true, get: function (r) { return r['GPU compute utilization']; }, fmt: function (v) { return pct(v, 1); } },
      { key: 'comm', label: 'communication not overlapped', num: true, get: function (r) { return r['communication not overlapped (ms)']; }, fmt: ms },
      { key: 'idle', label: 'idle', num: true, get: function (r) { return r['idle (ms)']; }, fmt: ms },
      { key: 'top', label: 'largest idle cause', get: function (r) { var c = obj(r['idle by cause (ms)']) || {}; var b = null; keys(c).forEach(function (k) { if (b == null || c[k] > c[b]) b = k; }); return b || ''; } },
      { key: 'fn', label: 'CPU function during idle', get: function (r) { var f = (r['CPU functions during idle'] || [])[0]; return f ? f['function'] : ''; }, fmt: function (v) { return v ? fnName(v) : '–'; } },
      { key: 'short', label: 'kernels under 10 us', num: true, get: function (r) { return r['kernels under 10 us']; }, fmt: function (v) { return pct(v, 1); } },
      { key: 'lpm', label: 'launches per ms', num: true, get: function (r) { return r['launches per ms']; }, fmt: function (v) { return isNum(v) ? v.toFixed(1) : '–'; } }] }));
  }
  function viewSteps(root) {
    var st = obj(M.rep[K_STEPS]) || {};
    var ids = keys(st);
    add(root, h('h1', { text: 'Step by step' }));
    add(root, howto('Steps', [
      ['slow step', 'A step longer than the worker\'s median step by more than 10% and by more than 3.5 robust deviations (MAD).'],
      ['function', 'For each step longer than the median: the function whose time in that step exceeds its median in the other steps by the most (a GPU kernel when one explains half of the extra time, else the most specific CPU stack).']]));
    var rows = [];
    ids.forEach(function (id) {
      var w = obj(st[id]) || {};
      (Array.isArray(w.steps) ? w.steps : []).forEach(function (x) {
        rows.push({ worker: id, number: x.number, ms: x.ms, extra: x['extra (ms)'], slow: !!x.slow, fn: x['function'] || '', fms: x['function (ms)'], fmed: x['function in the other steps, median (ms)'] });
      });
    });
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: 'Step time, each step of each worker' })),
      legend([['#9cc3e6', 'step'], ['#cf222e', 'slow step'], ['#57606a', 'worker median', ';height:2px']]));
    var el = h('div', { class: 'chart', id: 'chart-steps' });
    card.appendChild(el);
    add(root, card);
    queue(function () {
      var first = obj(st[ids[0]]) || {};
      chart(el, {
        grid: { left: 60, right: 16, top: 16, bottom: rows.length > 64 ? 56 : 40 },
        tooltip: { trigger: 'item', formatter: function (p) { var r = rows[p.dataIndex]; if (!r) return ''; return esc(r.worker) + '<br>step ' + esc(r.number) + ': ' + esc(ms(r.ms)) + (r.fn ? '<br>extra in ' + esc(fnName(r.fn).textContent || r.fn) + ': ' + esc(ms(r.fms)) : ''); } },
        xAxis: { type: 'category', data: rows.map(function (r) { return (ids.length > 1 ? (M.byId[r.worker] && M.byId[r.worker].rank != null ? M.byId[r.worker].rank : r.worker) + ':' : '') + r.number; }), name: 'step', nameLocation: 'middle', nameGap: 24 },
        yAxis: { type: 'value', name: 'ms' },
        dataZoom: zoomFor(rows.length),
        series: [{ type: 'bar', barMaxWidth: 28, markLine: ids.length === 1 ? medianLine(first['median (ms)']) : undefined,
          data: rows.map(function (r) { return { value: r.ms, itemStyle: { color: r.slow ? '#cf222e' : '#9cc3e6' } }; }) }]
      });
    });
    add(root, table({ title: 'Steps', rows: rows, sort: ['extra', -1], placeholder: 'Filter by worker, step or function…', empty: 'No worker profiled several steps.',
      rowClass: function (r) { return r.slow ? 'hl' : null; }, cols: [
        { key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'number', label: 'step', num: true, fmt: function (v) { return String(v); } },
        { key: 'ms', label: 'time', num: true, fmt: ms },
        { key: 'extra', label: 'vs median', num: true, fmt: function (v) { return isNum(v) ? (v >= 0 ? '+' : '') + ms(v) : '–'; } },
        { key: 'slow', label: 'slow', fmt: function (v) { return v ? h('span', { class: 'badge bad', text: 'slow' }) : ''; } },
        { key: 'fn', label: 'extra time in', fmt: function (v) { return v ? fnName(v) : '–'; } },
        { key: 'fms', label: 'function in this step', num: true, fmt: ms },
        { key: 'fmed', label: 'function, other steps (median)', num: true, fmt: ms }] }));
  }

  /* ---- Critical path (report "Critical path", docs/display.md) ---------
     Per worker and profiled step, the longest chain of dependent work from
     the step's start to its end, split by kind (the kinds sum to the step's
     ms); the functions with most time on it and where the main thread
     blocked; with several workers the job-wide path per step. */
  var K_CP = 'Critical path';
  var CP_KINDS = ['cpu', 'compute', 'communication', 'memory', 'launch', 'gap', 'wait'];
  var CP_COLOR = { cpu: '#b07aa1', compute: '#4e79a7', communication: '#f28e2b', memory: '#59a14f',
    launch: '#edc948', gap: '#bab0ac', wait: '#e15759' };
  var CP_MORE = ['#76b7b2', '#9c755f', '#ff9da7', '#17becf'];
  var CP_WINDOW = 120;   // bars shown at once when there are more (the slider shows the rest)
  function cpColor(C, k) { return CP_COLOR[k] || CP_MORE[Math.max(0, C.kinds.indexOf(k)) % CP_MORE.length]; }
  function cpStep(n) { return n === -1 ? 'window' : n == null ? '?' : String(n); }
  function cpWorkerName(id) { var w = M.byId[id]; return w && w.rank != null ? String(w.rank) : id; }
  function cpSplitOf(o, kinds) {
    var s = {};
    o = obj(o) || {};
    kinds.forEach(function (k) { s[k] = isNum(o[k]) ? o[k] : 0; });
    return s;
  }
  function cpTotal(s, kinds) { return kinds.reduce(function (t, k) { return t + s[k]; }, 0); }
  function cpData() {
    if (M.cp === undefined) M.cp = buildCp();
    return M.cp;
  }
  function buildCp() {
    var s = obj(M.rep[K_CP]);
    if (!s) return null;
    var kinds = Array.isArray(s.kinds) && s.kinds.length ? s.kinds.map(String) : CP_KINDS.slice();
    CP_KINDS.forEach(function (k) { if (kinds.indexOf(k) < 0) kinds.push(k); });
    kinds = kinds.filter(function (k, i) { return kinds.indexOf(k) === i; });
    var ws = obj(s.workers) || {};
    var order = function (id) { var w = M.byId[id]; return w ? w.index : 1e9; };
    var ids = keys(ws).sort(function (a, b) { return order(a) - order(b) || collator.compare(a, b); });
    var several = ids.length > 1;
    var rows = [], workers = [];
    ids.forEach(function (id) {
      var w = obj(ws[id]) || {};
      var steps = (Array.isArray(w.steps) ? w.steps : []).filter(obj);
      var mine = steps.map(function (st) {
        var split = cpSplitOf(st['split (ms)'], kinds);
        var n = isNum(st.number) ? st.number : null;
        return { worker: id, number: n, label: (several ? cpWorkerName(id) + ':' : '') + cpStep(n),
          ms: isNum(st.ms) ? st.ms : cpTotal(split, kinds), slow: st.slow === true, split: split,
          waitedFor: st['waited for'] != null ? String(st['waited for']) : '',
          functions: (Array.isArray(st.functions) ? st.functions : []).filter(obj),
          waits: (Array.isArray(st.waits) ? st.waits : []).filter(obj) };
      });
      mine.forEach(function (r) { r.nsteps = mine.length; });
      /* what grew: each kind against its median over the worker's steps */
      if (mine.length > 1) {
        var med = {};
        kinds.forEach(function (k) { med[k] = median(mine.map(function (r) { return r.split[k]; })); });
        mine.forEach(function (r) {
          var best = null;
          kinds.forEach(function (k) { var d = r.split[k] - med[k]; if (d > 0 && (!best || d > best[1])) best = [k, d]; });
          r.grew = best;
        });
      }
      var sum = obj(w['split (ms)']) ? cpSplitOf(w['split (ms)'], kinds) : null;
      if (!sum) {
        sum = cpSplitOf(null, kinds);
        mine.forEach(function (r) { kinds.forEach(function (k) { sum[k] += r.split[k]; }); });
      }
      workers.push({ id: id, label: cpWorkerName(id), split: sum, ms: cpTotal(sum, kinds), steps: mine.length,
        slowN: mine.filter(function (r) { return r.slow; }).length });
      Array.prototype.push.apply(rows, mine);
    });
    var job = (Array.isArray(s.job) ? s.job : []).filter(obj).map(function (j) {
      var split = cpSplitOf(j['split (ms)'], kinds);
      var n = isNum(j.number) ? j.number : null;
      return { number: n, label: cpStep(n), ms: isNum(j.ms) ? j.ms : cpTotal(split, kinds), split: split,
        through: j.through != null ? String(j.through) : '', whatIf: isNum(j['what-if (ms)']) ? j['what-if (ms)'] : null };
    });
    if (!rows.length && !job.length) return null;
    var tot = cpSplitOf(null, kinds);
    workers.forEach(function (w) { kinds.forEach(function (k) { tot[k] += w.split[k]; }); });
    return { kinds: kinds, rows: rows, workers: workers, job: job, several: several, total: tot,
      slow: rows.filter(function (r) { return r.slow; }) };
  }
  function cpLines(C, split, total) {
    return C.kinds.filter(function (k) { return split[k] > 0; }).map(function (k) {
      return '<span style="display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:5px;background:' + cpColor(C, k) + '"></span>' +
        esc(k + ': ' + ms(split[k]) + ' (' + pct(total > 0 ? split[k] / total : NaN, 0) + ')');
    });
  }
  /* A stacked bar per item (items: {label, split, ms, slow}); with more
     than CP_WINDOW items the chart opens on a window of them around the
     first slow one, the slider moves it (only the window is drawn). */
  function cpChart(C, id, title, items, xname, o) {
    o = o || {};
    var card = h('div', { class: 'chart-card' }, h('div', { class: 'hd' }, h('h3', { text: title })),
      legend(C.kinds.map(function (k) { return [cpColor(C, k), k]; }).concat(o.legend || [])));
    if (!items.length) { card.appendChild(empty(o.empty || 'Nothing to show.')); return card; }
    var n = items.length;
    if (n > CP_WINDOW) card.appendChild(h('div', { class: 'note', text: 'Showing ' + CP_WINDOW + ' of ' + n + ' bars' +
      (items.some(function (it) { return it.slow; }) ? ', from the first slow step' : '') + ': drag or resize the slider for the others.' }));
    var el = h('div', { class: 'chart', id: id });
    card.appendChild(el);
    queue(function () {
      var slowAt = Object.create(null), marks = [], first = -1;
      items.forEach(function (it, i) {
        if (!it.slow) return;
        slowAt[it.label] = 1;
        marks.push({ coord: [i, it.ms], value: '' });
        if (first < 0) first = i;
      });
      var dz = zoomFor(n);
      if (n > CP_WINDOW) {
        var a = Math.max(0, Math.min(first < 0 ? 0 : first - 10, n - CP_WINDOW));
        /* no data shadow in the slider: it would plot the first kind only, over every bar */
        dz.forEach(function (z) { z.startValue = a; z.endValue = a + CP_WINDOW - 1; if (z.type === 'slider') z.showDataShadow = false; });
      }
      var last = C.kinds.length - 1;
      var c = chart(el, {
        grid: { left: 60, right: 16, top: 24, bottom: n > 64 ? 56 : 40 },
        tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, confine: true, formatter: function (ps) {
          var it = items[ps && ps[0] ? ps[0].dataIndex : -1];
          if (!it) return '';
          return ['<b>' + esc(o.head ? o.head(it) : it.label) + '</b>', esc('path ' + ms(it.ms) + (it.slow ? ' · slow step' : ''))]
            .concat(o.tip ? o.tip(it).map(esc) : []).concat(cpLines(C, it.split, it.ms)).join('<br>');
        } },
        xAxis: { type: 'category', data: items.map(function (it) { return it.label; }), name: xname, nameLocation: 'middle', nameGap: 24,
          axisLabel: { formatter: function (v) { var t = String(v).replace(/[{}]/g, ''); return slowAt[v] ? '{s|' + t + '}' : t; },
            rich: { s: { color: '#cf222e', fontWeight: 'bold' } } } },
        yAxis: { type: 'value', name: 'ms' },
        dataZoom: dz,
        series: C.kinds.map(function (k, j) {
          return { type: 'bar', stack: 'path', name: k, barMaxWidth: 32, progressive: 0, itemStyle: { color: cpColor(C, k) },
            data: items.map(function (it) { return it.split[k]; }),
            markPoint: j === last && marks.length ? { silent: true, symbol: 'triangle', symbolRotate: 180, symbolSize: 9,
              symbolOffset: [0, -8], itemStyle: { color: '#cf222e' }, label: { show: false }, data: marks } : undefined };
        })
      });
      if (c && o.click) c.on('click', function (p) { var it = items[p.dataIndex]; if (it) o.click(it); });
    });
    return card;
  }
  function cpMini(C, r) {
    var bar = h('span', { class: 'cp-mini', title: C.kinds.filter(function (k) { return r.split[k] > 0; })
      .map(function (k) { return k + ' ' + ms(r.split[k]) + ' (' + pct(r.ms > 0 ? r.split[k] / r.ms : NaN, 0) + ')'; }).join('\n') });
    C.kinds.forEach(function (k) {
      if (r.split[k] > 0 && r.ms > 0) bar.appendChild(h('span', { style: 'width:' + (100 * r.split[k] / r.ms).toFixed(2) + '%;background:' + cpColor(C, k) }));
    });
    return bar;
  }
  function cpTop(C, split) {
    var b = null;
    C.kinds.forEach(function (k) { if (split[k] > 0 && (b == null || split[k] > split[b])) b = k; });
    return b;
  }
  function cpFunction(f, alone) {   // alone: the worker's only step (its median is itself)
    var v = f.ms, m = alone ? null : f['median (ms)'];
    var grew = isNum(v) && isNum(m) && v - m >= 0.05 && v > 1.5 * m;
    return h('div', null, fnName(String(f.name != null ? f.name : '?')), ' ',
      h('span', { class: grew ? 'cp-grew' : null, text: ms(v) }),
      isNum(m) ? h('span', { class: 'muted', text: ' vs median ' + ms(m) }) : null,
      f.kind ? h('span', { class: 'muted', text: ' · ' + String(f.kind) }) : null);
  }
  function cpWait(wt) {
    var ts = wt['target stream'], bs = wt['behind stream'];
    var call = wt.call != null && wt.call !== wt.span ? String(wt.call) : '';
    return h('div', null, h('b', { text: 'waits ' + ms(wt.ms) }),
      wt.span != null ? [' in ', fnName(String(wt.span))] : null,
      call ? h('span', { class: 'cp-call' }, ' (', fnName(call), ')') : null,
      wt.target != null ? [' for ', fnName(String(wt.target))] : null,
      isNum(ts) ? ' on stream ' + ts : null,
      wt.behind != null ? [', queued behind ', fnName(String(wt.behind)), isNum(bs) ? ' on stream ' + bs : null] : null);
  }
  function viewCritPath(root) {
    var C = cpData();
    add(root, h('h1', { text: 'Critical path: what each step waited on' }));
    if (!C) { add(root, empty('This report has no critical path.')); return; }
    add(root, howto('the critical path', [
      ['critical path', 'The longest chain of dependent work from a step\'s start to its end: CPU ops, kernel launches, kernels on a stream, synchronisations, waits of one stream for another. Work off the path overlaps it: making it faster does not shorten the step; shortening the path does. The kinds below add up to the step time.'],
      ['cpu · compute · communication · memory', 'The path inside CPU-bound host work, GPU compute kernels, communication (NCCL kernels, CPU collectives), and memcpy/memset.'],
      ['launch', 'Kernel launches and other CUDA runtime calls on the path (launch overhead, a synchronisation call itself).'],
      ['gap', 'Time between one kernel and the next on the GPU with nothing on the path to explain it: the GPU waiting for the host.'],
      ['wait', 'Waiting for another worker (only in multi-worker jobs): the path leaves this worker there.'],
      ['slow step', 'A step the report marks slow: red step label and ▼ above its bar. The table lists the slow steps (every step when none is slow).'],
      ['grew most · functions · waits', 'Per step: the kind whose time on the path exceeds its median over the worker\'s steps by the most; the functions with the most time on the path (on this step vs their median over the steps, red when it grew); and where the main thread blocked: the span, the call, what it waited for and what that was queued behind on its stream.'],
      ['job path', 'With several workers: the path of the whole job per step, the worker it runs through (the one the others waited for) and, when the report has it, the what-if: the step without that worker\'s late arrivals at the collectives on the path.']]));
    var tot = C.total, all = cpTotal(tot, C.kinds), top = cpTop(C, tot);
    add(root, h('div', { class: 'stats' },
      stat('Profiled steps', String(C.rows.length), C.several ? plural(C.workers.length, 'worker') : null),
      stat('Slow steps', String(C.slow.length), C.slow.length ? 'marked red in the chart' : 'none marked slow'),
      stat('Largest part of the path', top ? top : '–', top ? pct(all > 0 ? tot[top] / all : NaN, 0) + ' of ' + ms(all) + ' (all steps)' : null),
      stat('GPU gaps on the path', pct(all > 0 ? tot.gap / all : NaN, 0), ms(tot.gap)),
      C.several ? stat('Waiting for other workers', pct(all > 0 ? tot.wait / all : NaN, 0), ms(tot.wait)) : null));
    add(root, cpChart(C, 'chart-cp-steps', C.several ? 'Critical path of each step of each worker (rank:step)' : 'Critical path of each step', C.rows,
      C.several ? 'rank:step' : 'step', {
        legend: [['#cf222e', 'slow step ▼']],
        empty: 'No worker has steps on the critical path.',
        head: function (r) { return (C.several ? workerLabel(M.byId[r.worker] || { id: r.worker, rank: null }) + ' · ' : '') + (r.number === -1 ? 'whole window' : 'step ' + cpStep(r.number)); },
        tip: function (r) {
          return (r.grew ? ['grew most: ' + r.grew[0] + ' +' + ms(r.grew[1]) + ' over the median step'] : [])
            .concat(r.waitedFor ? ['waited for ' + workerLabel(M.byId[r.waitedFor] || { id: r.waitedFor, rank: null })] : []);
        },
        click: C.several ? function (r) { location.hash = '#worker/' + encodeURIComponent(r.worker); } : null }));
    /* per worker, summed: with one step per worker it would repeat the chart above */
    if (C.workers.length > 1 && C.workers.some(function (w) { return w.steps > 1; })) {
      add(root, cpChart(C, 'chart-cp-workers', 'Critical path per worker, summed over its steps', C.workers, 'rank', {
        head: function (w) { return w.id; },
        tip: function (w) { return [plural(w.steps, 'step') + (w.slowN ? ', ' + w.slowN + ' slow' : '')]; },
        click: function (w) { location.hash = '#worker/' + encodeURIComponent(w.id); } }));
    }
    var slow = C.slow.length > 0;
    add(root, h('h2', { text: slow ? 'Slow steps: what grew on the path' : 'Steps: what is on the path' }));
    add(root, table({ title: slow ? 'Slow steps' : 'Steps (none is marked slow)', rows: slow ? C.slow : C.rows, page: 25, cls: 'cp-table',
      sort: ['ms', -1], placeholder: 'Filter by worker, function, wait…', empty: 'No step.',
      rowClass: function (r) { return r.slow ? 'hl' : null; }, cols: [
        { key: 'worker', label: 'worker', fmt: function (v, r) { return workerLink(v, r.slow ? 'bad' : null, C.several); } },
        { key: 'number', label: 'step', num: true, fmt: function (v) { return cpStep(v); } },
        { key: 'ms', label: 'path', num: true, fmt: ms },
        { key: 'split', label: 'by kind', title: 'the path split by kind; grew: the kind whose time on the path exceeds its median over the worker\'s steps by the most',
          get: function (r) { return cpTop(C, r.split) || ''; },
          fmt: function (v, r) {
            return h('div', null, cpMini(C, r), h('div', { class: 'muted cp-small', text: v ? 'largest: ' + v + ' ' + pct(r.ms > 0 ? r.split[v] / r.ms : NaN, 0) : '' }),
              r.grew ? h('div', { class: 'cp-small' + (r.slow ? ' cp-grew' : ''), text: 'grew: ' + r.grew[0] + ' +' + ms(r.grew[1]) }) : null,
              r.waitedFor ? h('div', { class: 'cp-small' }, 'waited for ', workerLink(r.waitedFor, null, true)) : null);
          } },
        { key: 'fn', label: 'functions on the path (this step vs median)', get: function (r) { return r.functions.map(function (f) { return String(f.name); }).join(' '); },
          fmt: function (v, r) { return r.functions.length ? h('div', { class: 'cp-list' }, r.functions.map(function (f) { return cpFunction(f, r.nsteps < 2); })) : '–'; } },
        { key: 'waits', label: 'where the main thread waited', get: function (r) {
          return r.waits.map(function (wt) { return [wt.span, wt.call, wt.target, wt.behind].filter(function (x) { return x != null; }).join(' '); }).join(' '); },
          fmt: function (v, r) { return r.waits.length ? h('div', { class: 'cp-list' }, r.waits.map(cpWait)) : '–'; } }] }));
    if (C.job.length) {
      add(root, h('h2', { text: 'The job\'s path' }));
      add(root, cpChart(C, 'chart-cp-job', 'Critical path of the job, per step', C.job, 'step', {
        head: function (j) { return j.number === -1 ? 'whole window' : 'step ' + cpStep(j.number); },
        tip: function (j) {
          return (j.through ? ['runs through ' + workerLabel(M.byId[j.through] || { id: j.through, rank: null })] : [])
            .concat(j.whatIf != null ? ['what-if: ' + ms(j.whatIf) + ' without its late arrivals'] : []);
        } }));
      add(root, table({ title: 'Job path per step', rows: C.job, sort: ['number', 1], cols: [
        { key: 'number', label: 'step', num: true, fmt: function (v) { return cpStep(v); } },
        { key: 'ms', label: 'path', num: true, fmt: ms },
        { key: 'through', label: 'runs through', fmt: function (v) { return v ? workerLink(v, null, true) : '–'; } }]
        .concat(C.job.some(function (j) { return j.whatIf != null; }) ? [{ key: 'whatIf', label: 'what-if', num: true, fmt: ms,
          title: 'the step without the time the worker it runs through arrived late (beyond the median member) at the collectives on the path' }] : [])
        .concat(C.kinds.map(function (k) {
          return { key: 'k:' + k, label: k, num: true, get: function (j) { return j.split[k]; }, fmt: ms };
        })) }));
    }
  }

  /* Timeline view (docs/display.md "The timeline"): one step of every rank,
     drawn on one <canvas> so that 1,000 ranks stay fast.  Per rank a lane of
     three rows: the main thread's top-level spans, GPU compute, and the
     collectives (arrival to end), with the waits for the last arriver
     (orange) and a straggler's late arrivals (red) on the collective row; a
     shaded band per collective instance from its first arrival to its end,
     a red line at its last arrival.  Past TL_MAX_LANES ranks, runs of ranks
     share a lane (the union of their items); stragglers, ranks placed but
     not aligned and the highlighted finding's ranks keep lanes of their own. */
  var TL_MAX_LANES = 64;
  var TL_COLOR = { gpu: '#59a14f', coll: '#8e7cc3', wait: '#f28e2b', late: '#cf222e',
    band: 'rgba(142,124,195,0.10)', last: 'rgba(207,34,46,0.45)', hl: '#fff3b0', stripe: '#f6f8fa', grid: '#eaeef2' };
  /* span colours, light enough for a dark name on them; by first appearance */
  var TL_SPAN = ['#a0cbe8', '#d4b8e0', '#e8d59e', '#9fd6cf', '#c9c3bf', '#f4c2c2', '#c5d0f0', '#d9e6a5'];
  var TL_LABEL_W = 204, TL_AXIS_H = 24;
  var tlCache;
  function tlArr(x) { return Array.isArray(x) ? x : []; }
  function tlData() {
    if (tlCache !== undefined) return tlCache;
    tlCache = null;
    var T = obj(M.rep.timeline);
    if (!T || !Array.isArray(T.workers) || !T.workers.length) return null;
    var ws = T.workers.map(function (w0, i) {
      var w = obj(w0) || {};
      return { i: i, id: String(w.worker != null ? w.worker : 'worker ' + i), label: String(w.label || w.worker || 'worker ' + i),
        rank: isNum(w.rank) ? w.rank : null, aligned: w.aligned !== false, straggler: w.straggler === true,
        steps: tlArr(w.steps), spans: tlArr(w.spans), gpu: tlArr(w.gpu), coll: tlArr(w.coll), late: tlArr(w.late), wait: tlArr(w.wait) };
    });
    var steps = tlArr(T.steps).filter(function (s) { return obj(s) && isNum(s.start_us) && isNum(s.end_us) && s.end_us > s.start_us; })
      .map(function (s) { return { step: isNum(s.step) ? s.step : null, start: s.start_us, end: s.end_us, slow: tlArr(s.slow).filter(isNum) }; });
    if (!steps.length) {          // no step kept: the whole window as one
      var lo = Infinity, hi = -Infinity;
      ws.forEach(function (w) {
        for (var j = 0; j + 1 < w.gpu.length; j += 2) { lo = Math.min(lo, w.gpu[j]); hi = Math.max(hi, w.gpu[j + 1]); }
        for (j = 0; j + 2 < w.spans.length; j += 3) { lo = Math.min(lo, w.spans[j]); hi = Math.max(hi, w.spans[j] + w.spans[j + 1]); }
        for (j = 0; j + 2 < w.coll.length; j += 3) { lo = Math.min(lo, w.coll[j + 1]); hi = Math.max(hi, w.coll[j + 2]); }
      });
      if (!(hi > lo)) { lo = 0; hi = 1; }
      steps = [{ step: null, start: lo, end: hi, slow: [] }];
    }
    var spanColor = Object.create(null), nsc = 0;
    ws.forEach(function (w) { for (var j = 2; j < w.spans.length; j += 3) if (!(w.spans[j] in spanColor)) spanColor[w.spans[j]] = TL_SPAN[nsc++ % TL_SPAN.length]; });
    tlCache = { T: T, workers: ws, steps: steps, spanColor: spanColor, spanColors: TL_SPAN.slice(0, Math.min(nsc, TL_SPAN.length)), names: tlArr(T.names), channels: tlArr(T.channels), inst: tlArr(T.instances),
      findings: tlArr(T.findings).filter(function (e) { return Array.isArray(e) && isNum(e[0]) && obj((M.rep.findings || [])[e[0]]); }) };
    return tlCache;
  }
  function tlStepLabel(s) { return s.step == null ? 'the window' : 'step ' + s.step; }
  function tlWho(D, i) { var w = D.workers[i]; return w ? (w.rank != null ? 'rank ' + w.rank : w.id) : 'worker ' + i; }
  /* The items of step s, per worker: [x0, x1, what] in µs on the job clock
     (a worker placed but not aligned is moved so that its step starts with
     the job's), the instances' first and last arrivals and ends, the waits. */
  function tlStep(D, s) {
    var per = [], inst = Object.create(null), wait = 0, maxWait = 0, maxWho = -1, last = Object.create(null);
    D.workers.forEach(function (w) {
      var ws = s.start, we = s.end, off = 0, j, x0, x1;
      for (j = 0; j + 2 < w.steps.length; j += 3) if (w.steps[j] === s.step) { ws = w.steps[j + 1]; we = w.steps[j + 2]; break; }
      if (!w.aligned) off = s.start - ws;
      var o = { spans: [], gpu: [], coll: [], late: [], wait: [], off: off, waitUs: 0 };
      var inStep = function (a, b) { return isNum(a) && isNum(b) && a < we && b > ws; };
      for (j = 0; j + 2 < w.spans.length; j += 3) {
        x0 = w.spans[j]; x1 = x0 + w.spans[j + 1];
        if (inStep(x0, x1 + 1)) o.spans.push([x0 + off, x1 + off, w.spans[j + 2]]);
      }
      for (j = 0; j + 1 < w.gpu.length; j += 2) if (inStep(w.gpu[j], w.gpu[j + 1])) o.gpu.push([w.gpu[j] + off, w.gpu[j + 1] + off]);
      for (j = 0; j + 2 < w.coll.length; j += 3) {
        if (!inStep(w.coll[j + 1], w.coll[j + 2] + 1)) continue;
        var k = w.coll[j], a = w.coll[j + 1] + off, e = w.coll[j + 2] + off;
        o.coll.push([a, e, k]);
        var I = inst[k] || (inst[k] = { k: k, first: a, last: a, end: e, n: 0 });
        I.first = Math.min(I.first, a); I.last = Math.max(I.last, a); I.end = Math.max(I.end, e); I.n++;
      }
      for (j = 0; j + 2 < w.late.length; j += 3) if (inStep(w.late[j + 1], w.late[j + 2] + 1)) {
        o.late.push([w.late[j + 1] + off, w.late[j + 2] + off, w.late[j]]);
        last[w.i] = (last[w.i] || 0) + 1;
      }
      for (j = 0; j + 2 < w.wait.length; j += 3) if (inStep(w.wait[j + 1], w.wait[j + 2] + 1)) {
        o.wait.push([w.wait[j + 1] + off, w.wait[j + 2] + off, w.wait[j]]);
        o.waitUs += w.wait[j + 2] - w.wait[j + 1];
      }
      wait += o.waitUs;
      if (o.waitUs > maxWait) { maxWait = o.waitUs; maxWho = w.i; }
      per.push(o);
    });
    return { s: s, per: per, inst: Object.keys(inst).map(function (k) { return inst[k]; }), wait: wait, maxWait: maxWait, maxWho: maxWho, last: last };
  }
  function tlDefaultStep(D) {
    var i, best = -1, bw = 0;
    for (i = 0; i < D.steps.length; i++) if (D.steps[i].slow.length) return i;
    for (i = 0; i < D.steps.length; i++) {
      var w = 0;
      D.workers.forEach(function (x) { for (var j = 0; j + 2 < x.wait.length; j += 3) if (x.wait[j + 1] >= D.steps[i].start && x.wait[j + 1] < D.steps[i].end) w += x.wait[j + 2] - x.wait[j + 1]; });
      if (w > bw) { bw = w; best = i; }
    }
    return best >= 0 ? best : 0;
  }
  /* Lanes: one per rank up to TL_MAX_LANES, else runs of ranks per lane
     and a lane of its own for each straggler, unaligned or highlighted rank. */
  function tlLanes(D, hl) {
    var ws = D.workers, lanes = [];
    if (ws.length <= TL_MAX_LANES) return ws.map(function (w) { return { ws: [w.i], one: w }; });
    var own = function (w) { return w.straggler || !w.aligned || !!hl[w.i]; };
    var nown = ws.filter(own).length;
    var size = Math.ceil((ws.length - nown) / Math.max(8, TL_MAX_LANES - nown));
    var cur = null;
    ws.forEach(function (w) {
      if (own(w)) { cur = null; lanes.push({ ws: [w.i], one: w }); return; }
      if (!cur || cur.ws.length >= size) { cur = { ws: [] }; lanes.push(cur); }
      cur.ws.push(w.i);
    });
    lanes.forEach(function (l) { if (!l.one && l.ws.length === 1) l.one = ws[l.ws[0]]; });
    return lanes;
  }
  function tlLaneLabel(D, l) {
    if (l.one) return l.one.label;
    var a = D.workers[l.ws[0]], b = D.workers[l.ws[l.ws.length - 1]];
    return (a.rank != null && b.rank != null ? 'ranks ' + a.rank + '–' + b.rank : tlWho(D, a.i) + '…') + ' (' + l.ws.length + ')';
  }
  function tlTick(span) {      // a round step for about 8 ticks over span µs
    var raw = span / 8, p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10)), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  function tlMs(us) { return ms(us / 1000); }

  function viewTimeline(root) {
    var D = tlData();
    add(root, h('h1', { text: 'Timeline: one step across the ranks' }));
    if (!D) { add(root, empty('This report has no timeline.')); return; }
    var st = { step: tlDefaultStep(D), hl: Object.create(null), find: -1 }, S = null, G = null;
    var how = howto('the timeline', [
      ['lanes', 'One lane per rank (the label names it; ▲ straggler: the Lockstep section named it the worker the others waited for; "not aligned": its clock could not be matched, its step is placed at the job\'s step start). Each lane has three rows: the main thread\'s top-level spans (CPU), GPU compute, and the collectives from its arrival to their end.'],
      ['colours', 'Orange: waiting at a collective for the last arriver. Red: a late arrival, from the median member\'s arrival to its own. Shaded band: one collective instance, from its first arrival to its end; the red line inside it is its last arrival.'],
      ['many ranks', 'Past ' + TL_MAX_LANES + ' ranks, runs of neighbouring ranks share a lane that draws the union of their items (hover names the rank); stragglers, ranks not aligned and the ranks of the highlighted finding keep a lane of their own.'],
      ['findings', 'Click a finding to highlight its ranks and jump to its first step: the straggler\'s late arrivals and the others\' waits stand out.']]);
    how.removeAttribute('open');
    add(root, how);
    var nal = D.workers.filter(function (w) { return !w.aligned; }).length;
    add(root, h('p', { class: 'note', id: 'tl-about' },
      plural(D.workers.length, 'rank') + ' · ' + plural(D.steps.length, 'step') + ' kept' + (D.T.kept ? ' (' + String(D.T.kept) + ')' : '') +
      (nal ? ' · ' + nal + ' not aligned' : '') + (D.T.clock ? ' · times: ' + String(D.T.clock) : '')));

    /* findings shown on the timeline */
    var fcards = [];
    if (D.findings.length) {
      var fl = h('div', { class: 'tl-findings', id: 'tl-findings' });
      D.findings.forEach(function (e, k) {
        var f = M.rep.findings[e[0]], cf = obj(f.confidence), lvl = cf && typeof cf.level === 'string' ? cf.level : '';
        var who = tlArr(e[1]).filter(isNum).map(function (i) { return tlWho(D, i); });
        var fsteps = tlArr(e[2]).filter(isNum);
        var card = h('div', { class: 'tl-find', role: 'button', tabindex: '0', 'data-finding': String(e[0]),
          title: 'Highlight its ranks and show its first step',
          onclick: function () { pick(k); }, onkeydown: function (ev) { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); pick(k); } } },
          h('div', { class: 'meta' },
            h('b', { text: '#' + (isNum(f.rank) ? f.rank : e[0] + 1) + ' ' + (who.length ? who.slice(0, 4).join(', ') + (who.length > 4 ? ' and ' + (who.length - 4) + ' more' : '') : 'all ranks') }),
            f.category ? h('span', { class: 'badge', text: String(f.category) }) : null,
            lvl ? h('span', { class: 'badge conf ' + lvl, text: lvl }) : null,
            fsteps.length ? h('span', { class: 'muted', text: (fsteps.length === 1 ? 'step ' : 'steps ') + fsteps.join(', ') }) : null),
          f.explanation ? h('div', { class: 'tl-expl', text: String(f.explanation) }) : null,
          cf && cf.evidence ? h('div', { class: 'confidence-note', text: String(cf.evidence) }) : null);
        fcards.push(card);
        fl.appendChild(card);
      });
      add(root, h('h2', { text: 'Findings on the timeline' }));
      add(root, fl);
    }

    /* the step, the legend, the canvas */
    var sel = h('select', { id: 'tl-step', 'aria-label': 'Step' });
    D.steps.forEach(function (s, i) {
      var tag = s.slow.length ? ' · slow: ' + s.slow.slice(0, 3).map(function (x) { return tlWho(D, x); }).join(', ') + (s.slow.length > 3 ? '…' : '') : '';
      sel.appendChild(h('option', { value: String(i), text: tlStepLabel(s) + ' · ' + tlMs(s.end - s.start) + tag }));
    });
    sel.value = String(st.step);
    sel.addEventListener('change', function () { st.step = +sel.value; draw(); });
    var sum = h('div', { class: 'tl-sum', id: 'tl-sum' });
    var canvas = h('canvas', { id: 'tl-canvas', class: 'tl-canvas' });
    var tip = h('div', { class: 'tl-tip', id: 'tl-tip', hidden: true });
    var wrap = h('div', { class: 'tl-wrap' }, canvas, tip);
    var ctl = h('div', { class: 'ctl' }, h('label', { for: 'tl-step', text: 'Step ' }), sel);
    add(root, h('div', { class: 'chart-card tl-card' },
      h('div', { class: 'hd' }, h('h3', { text: 'Every rank in one step' }), ctl),
      legend([[TL_SPAN[0], 'CPU: the main thread\'s top-level spans (a colour per name)'], [TL_COLOR.gpu, 'GPU compute'], [TL_COLOR.coll, 'collective: arrival to end'],
        [TL_COLOR.wait, 'waiting for the last arriver'], [TL_COLOR.late, 'late arrival (from the median member\'s)'],
        ['rgba(142,124,195,0.35)', 'collective instance, first arrival to end; line: last arrival']]),
      sum, wrap));
    add(root, h('p', { class: 'note tl-file' },
      h('a', { href: 'timeline.json.gz', download: 'timeline.json.gz', id: 'tl-download', class: 'btn' }, 'Download timeline.json.gz'), ' ',
      'Open it in https://ui.perfetto.dev (Open trace file) or chrome://tracing.'));

    function pick(k) {
      var e = D.findings[k];
      st.hl = Object.create(null);
      if (st.find === k) st.find = -1;          // a second click clears it
      else {
        st.find = k;
        tlArr(e[1]).forEach(function (i) { if (isNum(i)) st.hl[i] = true; });
        var s0 = tlArr(e[2]).filter(isNum)[0];
        D.steps.forEach(function (s, i) { if (s.step === s0) st.step = i; });
        sel.value = String(st.step);
      }
      fcards.forEach(function (c, i) { c.classList.toggle('on', i === st.find); });
      draw();
    }

    function summary() {
      var s = S.s, n = S.inst.length, lastBy = keys(S.last).sort(function (a, b) { return S.last[b] - S.last[a]; });
      sum.textContent = '';
      add(sum, [h('b', { text: tlStepLabel(s) + ': ' + tlMs(s.end - s.start) }),
        ' · ' + plural(n, 'collective instance'),
        lastBy.length ? ' · last to arrive: ' + lastBy.slice(0, 3).map(function (i) { return tlWho(D, +i) + ' at ' + S.last[i] + ' of ' + n; }).join(', ') : '',
        S.wait > 0 ? ' · waiting in all ' + tlMs(S.wait) + ', most ' + tlMs(S.maxWait) + ' (' + tlWho(D, S.maxWho) + ')' : ' · no waits']);
    }

    function draw() {
      var t = performance.now();
      S = tlStep(D, D.steps[st.step]);
      summary();
      var lanes = tlLanes(D, st.hl), nl = lanes.length;
      var rowH = nl <= 16 ? 36 : nl <= 40 ? 22 : 16, gap = rowH >= 30 ? 6 : 3, sub = (rowH - gap) / 3;
      var W = Math.max(600, wrap.clientWidth || 1200), H = TL_AXIS_H + nl * rowH + 8;
      var dpr = window.devicePixelRatio || 1;
      canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
      canvas.style.width = W + 'px'; canvas.style.height = H + 'px';
      var c = canvas.getContext('2d');
      c.setTransform(dpr, 0, 0, dpr, 0, 0);
      c.fillStyle = '#fff'; c.fillRect(0, 0, W, H);
      var s = S.s, pad = (s.end - s.start) * 0.01, t0 = s.start - pad, t1 = s.end + pad;
      var x0 = TL_LABEL_W, x1 = W - 10, k = (x1 - x0) / (t1 - t0);
      var X = function (us) { return x0 + (us - t0) * k; };
      var anyHl = st.find >= 0, y, i, j, li;
      G = { lanes: lanes, rowH: rowH, gap: gap, sub: sub, X: X, t0: t0, k: k, x0: x0, x1: x1, W: W, H: H };
      /* lane stripes, the highlighted lanes */
      for (li = 0; li < nl; li++) {
        y = TL_AXIS_H + li * rowH;
        var hlLane = lanes[li].ws.some(function (wi) { return st.hl[wi]; });
        if (hlLane || li % 2) { c.fillStyle = hlLane ? TL_COLOR.hl : TL_COLOR.stripe; c.fillRect(0, y, W, rowH); }
      }
      /* time grid and axis (ms from the step's start) */
      var tick = tlTick(t1 - t0);
      c.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
      c.textBaseline = 'middle'; c.textAlign = 'center';
      for (var tt = Math.ceil((t0 - s.start) / tick) * tick; s.start + tt <= t1; tt += tick) {
        var gx = Math.round(X(s.start + tt)) + 0.5;
        c.fillStyle = TL_COLOR.grid; c.fillRect(gx - 0.5, TL_AXIS_H - 4, 1, H - TL_AXIS_H);
        c.fillStyle = '#59636e'; c.fillText(tlMs(tt), gx, TL_AXIS_H / 2 - 1);
      }
      /* collective instances: band from first arrival to end, line at the last arrival */
      S.inst.forEach(function (I) {
        c.fillStyle = TL_COLOR.band; c.fillRect(X(I.first), TL_AXIS_H, Math.max(1, X(I.end) - X(I.first)), nl * rowH);
        c.fillStyle = TL_COLOR.last; c.fillRect(Math.round(X(I.last)), TL_AXIS_H, 1, nl * rowH);
      });
      /* one path per colour and lane: far fewer fills than a fillRect per item */
      var L, yl, bar = function (a, b, yy, hh) { var xa = X(a), xb = X(b); if (xb < x0 || xa > x1) return; if (xa < x0) xa = x0; if (xb > x1) xb = x1; c.rect(xa, yy, Math.max(1, xb - xa), hh); };
      var fill = function (color, kind, dy, hh, only) {
        c.beginPath();
        for (var j2 = 0; j2 < L.ws.length; j2++) {
          var list = S.per[L.ws[j2]][kind];
          for (var i2 = 0; i2 < list.length; i2++) if (!only || D.spanColor[list[i2][2]] === only) bar(list[i2][0], list[i2][1], yl + dy, hh);
        }
        c.fillStyle = color; c.fill();
      };
      for (li = 0; li < nl; li++) {
        L = lanes[li]; yl = TL_AXIS_H + li * rowH + gap / 2;
        var dim = anyHl && !L.ws.some(function (wi) { return st.hl[wi]; });
        fill('#ffd8d3', 'late', -gap / 2, rowH);
        c.globalAlpha = dim ? 0.45 : 1;
        D.spanColors.forEach(function (col) { fill(col, 'spans', 0, sub - 1, col); });
        fill(TL_COLOR.gpu, 'gpu', sub, sub - 1);
        fill(TL_COLOR.coll, 'coll', 2 * sub, sub - 1);
        c.globalAlpha = 1;
        fill(TL_COLOR.wait, 'wait', 2 * sub, sub - 1);
        fill(TL_COLOR.late, 'late', 2 * sub - (rowH >= 30 ? 2 : 0), sub - 1 + (rowH >= 30 ? 4 : 0));
        for (j = 0; j < L.ws.length; j++) {
          var p = S.per[L.ws[j]];
          if (st.hl[L.ws[j]] && p.late.length) {
            c.strokeStyle = '#82071e'; c.lineWidth = 1.5;
            for (i = 0; i < p.late.length; i++) c.strokeRect(X(p.late[i][0]), yl - 1, Math.max(2, X(p.late[i][1]) - X(p.late[i][0])), rowH - gap + 2);
          }
        }
        /* span names where they fit (one rank per lane, tall rows) */
        if (L.one && rowH >= 30) {
          c.fillStyle = '#1f2328'; c.textAlign = 'left'; c.font = '10px system-ui, sans-serif';
          var o2 = S.per[L.one.i];
          for (i = 0; i < o2.spans.length; i++) {
            var sx = Math.max(x0, X(o2.spans[i][0])), sw = Math.min(x1, X(o2.spans[i][1])) - sx, nm = D.names[o2.spans[i][2]];
            if (sw > 40 && nm != null) {
              c.save(); c.beginPath(); c.rect(sx, yl, sw, sub); c.clip();
              c.fillText(String(nm).replace(/^#+ *| *#+$/g, ''), sx + 3, yl + sub / 2); c.restore();
            }
          }
        }
      }
      /* labels: the rank, ▲ straggler, not aligned */
      c.fillStyle = '#fff'; c.fillRect(0, 0, TL_LABEL_W - 4, TL_AXIS_H);
      c.textAlign = 'left';
      for (li = 0; li < nl; li++) {
        var L2 = lanes[li], ym = TL_AXIS_H + li * rowH + rowH / 2, lab = tlLaneLabel(D, L2), w1 = L2.one;
        var hl2 = L2.ws.some(function (wi) { return st.hl[wi]; });
        c.font = (hl2 || (w1 && w1.straggler) ? '600 ' : '') + (rowH >= 20 ? '12px' : '10.5px') + ' system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
        var tag = w1 && w1.straggler ? ' ▲ straggler' : w1 && !w1.aligned ? ' · not aligned' : '';
        var room = TL_LABEL_W - 12;
        while (c.measureText(lab + tag).width > room && lab.length > 6) lab = lab.slice(0, -2) + '…';
        c.fillStyle = w1 && w1.straggler ? '#cf222e' : '#1f2328';
        c.fillText(lab, 6, ym);
        if (tag) {
          c.fillStyle = w1.straggler ? '#cf222e' : '#9a6700';
          c.fillText(tag, 6 + c.measureText(lab).width, ym);
        }
      }
      c.fillStyle = TL_COLOR.grid; c.fillRect(TL_LABEL_W - 4, TL_AXIS_H, 1, nl * rowH);
      canvas.setAttribute('data-lanes', String(nl));
      canvas.setAttribute('data-step', String(s.step));
      canvas.setAttribute('data-highlight', keys(st.hl).map(function (i) { return tlWho(D, +i); }).join(','));
      timing.timeline = { draw: performance.now() - t, lanes: nl, ranks: D.workers.length, step: s.step };
    }

    /* hover: the rank, the item and its times */
    function itemAt(px, py) {
      if (!G || px < G.x0 || px > G.x1) return null;
      var li = Math.floor((py - TL_AXIS_H) / G.rowH);
      if (li < 0 || li >= G.lanes.length) return null;
      var row = Math.floor((py - TL_AXIS_H - li * G.rowH - G.gap / 2) / G.sub);
      if (row < 0) row = 0;
      if (row > 2) row = 2;
      var us = G.t0 + (px - G.x0) / G.k, tol = 2 / G.k, L = G.lanes[li], best = null;
      var prio = { late: 3, wait: 2, coll: 1, span: 1, gpu: 1 };
      var look = function (list, kind, wi) {
        for (var i = 0; i < list.length; i++) {
          var it = list[i];
          if (us < it[0] - tol || us > it[1] + tol) continue;
          if (!best || prio[kind] > prio[best.kind] || (kind === best.kind && it[1] - it[0] > best.it[1] - best.it[0])) best = { it: it, kind: kind, wi: wi };
        }
      };
      L.ws.forEach(function (wi) {
        var o = S.per[wi];
        if (row === 0) look(o.spans, 'span', wi);
        else if (row === 1) look(o.gpu, 'gpu', wi);
        else { look(o.late, 'late', wi); look(o.wait, 'wait', wi); look(o.coll, 'coll', wi); }
      });
      if (best) { best.lane = L; best.us = us; }
      return best || { lane: L, us: us };
    }
    function instName(k) {
      var q = 4 * k, nm = D.names[D.inst[q]], ch = D.channels[D.inst[q + 1]];
      return (nm != null ? shortName(String(nm)) : 'collective #' + k) + (ch != null ? ' on ' + String(ch) : '');
    }
    canvas.addEventListener('mousemove', function (ev) {
      var r = canvas.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top, b = itemAt(px, py);
      if (!b) { tip.hidden = true; return; }
      var s0 = S.s.start, lines = [], it = b.it, w = b.wi != null ? D.workers[b.wi] : null;
      var rel = function (us) { return '+' + tlMs(us - s0); };
      if (!it) {
        var mw = -1;
        b.lane.ws.forEach(function (wi) { if (mw < 0 || S.per[wi].waitUs > S.per[mw].waitUs) mw = wi; });
        lines.push(tlLaneLabel(D, b.lane) + (b.lane.ws.length > 1 && S.per[mw].waitUs > 0 ? ' · waited most in this step: ' + tlMs(S.per[mw].waitUs) + ' (' + tlWho(D, mw) + ')' : ''));
        lines.push(rel(b.us));
      } else {
        lines.push(w.label + (w.straggler ? ' · straggler' : '') + (w.aligned ? '' : ' · not aligned (placed at the step start)'));
        if (b.kind === 'span') lines.push('span ' + (D.names[it[2]] != null ? String(D.names[it[2]]) : '#' + it[2]));
        else if (b.kind === 'gpu') lines.push('GPU compute');
        else if (b.kind === 'coll') lines.push(instName(it[2]) + ': arrived ' + rel(it[0]) + ', ended ' + rel(it[1]));
        else if (b.kind === 'wait') {
          var lw = D.inst[4 * it[2] + 2];
          lines.push('waited at ' + instName(it[2]) + (isNum(lw) && lw >= 0 ? ' for ' + tlWho(D, lw) : ' for the last arriver'));
        } else lines.push('arrived last at ' + instName(it[2]) + ', later than the median member');
        lines.push(rel(it[0]) + ' → ' + rel(it[1]) + ' (' + tlMs(it[1] - it[0]) + ')');
      }
      tip.textContent = '';
      lines.forEach(function (l, i) { tip.appendChild(h('div', { class: i ? null : 'tl-tip-h', text: l })); });
      tip.hidden = false;
      var tw = tip.offsetWidth;
      tip.style.left = Math.min(px + 14, r.width - tw - 4) + 'px';
      tip.style.top = (py + 16) + 'px';
    });
    canvas.addEventListener('mouseleave', function () { tip.hidden = true; });
    window.addEventListener('resize', function () { if (canvas.offsetParent && G && Math.abs((wrap.clientWidth || 0) - G.W) > 2) draw(); });
    queue(draw);
  }

  var VIEWS = [
    { id: 'overview', label: 'Overview', fn: viewOverview, count: function () { return M.findings.filter(function (f) { return !isWeak(f); }).length; } },
    { id: 'workers', label: 'Workers', fn: viewWorkers, count: function () { return M.workers.length; }, neutral: true },
    { id: 'compute', label: 'GPU Compute', fn: viewCompute, count: function () { var g = obj(M.rep['GPU Compute']) || {}; return (Array.isArray(g[K_ISSUES]) ? g[K_ISSUES].length : 0) + keys(obj(g[K_ABN_UTIL])).length; } },
    { id: 'memory', label: 'Memory ops', fn: viewMemory, count: function () { return abnCount('GPU memory operations'); } },
    { id: 'communication', label: 'Communication', fn: viewComm, count: function () { return commRows().filter(function (r) { return r.abnormal; }).length; } },
    { id: 'runtime', label: 'CUDA Runtime', fn: viewRuntime, count: function () { return abnCount('CUDA Runtime'); } },
    { id: 'python', label: 'Python', fn: viewPython, count: function () { return keys(obj(M.rep['Python functions'])).length; }, neutral: true },
    { id: 'heatmap', label: 'Heatmap', fn: viewHeatmap },
    { id: 'breakdown', label: 'Time breakdown', fn: viewBreakdown, when: function () { return !!obj(M.rep[K_TB]); }, neutral: true },
    { id: 'steps', label: 'Steps', fn: viewSteps, when: function () { return !!obj(M.rep[K_STEPS]); }, count: function () { var n = 0; keys(obj(M.rep[K_STEPS])).forEach(function (id) { n += (M.rep[K_STEPS][id]['slow steps'] || []).length; }); return n; } },
    { id: 'critpath', label: 'Critical path', fn: viewCritPath, when: function () { return !!cpData(); }, count: function () { return cpData().slow.length; } },
    { id: 'timeline', label: 'Timeline', fn: viewTimeline, when: function () { return !!tlData(); }, count: function () { return tlData().findings.length; } },
    { id: 'hardware', label: 'Hardware', fn: viewHardware, when: function () { return !!hwData(); }, neutral: true, count: function () { return keys(hwData().workers).length; } },
    { id: 'hang', label: 'Hang', fn: viewHang, when: function () { return !!M.hang; }, count: function () { return M.hang && M.hang.hung ? 1 : 0; } }
  ];
  function abnCount(name) {
    var sec = obj(M.rep[name]) || {};
    var n = 0;
    keys(sec).forEach(function (op) { n += keys(obj(obj(sec[op]) && sec[op].abnormal_workers)).length; });
    return n;
  }
  var rendered = {};
  var tabBtn = {};

  function dec(x) { try { return decodeURIComponent(x); } catch (e) { return x; } }
  function route() {
    var raw = location.hash.replace(/^#/, '');
    var id = raw, q = null, wid = null;
    if (raw.indexOf('worker/') === 0) {
      wid = dec(raw.slice(7));
      id = 'worker';
    } else {
      var m2 = /^([^?]*)\?q=(.*)$/.exec(raw);
      if (m2) { id = m2[1]; q = dec(m2[2]); }
      id = dec(id) || 'overview';
    }
    var v = VIEWS.filter(function (x) { return x.id === id && (!x.when || x.when()); })[0];
    if (!v && id !== 'worker') { v = VIEWS[0]; id = v.id; }
    var main = document.getElementById('main');
    Array.prototype.forEach.call(main.querySelectorAll('.view'), function (el) { el.hidden = true; });
    Object.keys(tabBtn).forEach(function (k) { tabBtn[k].setAttribute('aria-selected', String(k === id || (id === 'worker' && k === 'workers'))); });
    var key = id === 'worker' ? 'worker:' + wid : id;
    var el = rendered[key];
    if (!el) {
      var t = performance.now();
      el = h('section', { class: 'view', id: 'view-' + (id === 'worker' ? 'worker' : id), 'data-view': key, role: 'tabpanel' });
      main.appendChild(el);
      try {
        if (id === 'worker') { Array.prototype.forEach.call(main.querySelectorAll('[data-view^="worker:"]'), function (o) { if (o !== el) { o.remove(); delete rendered[o.getAttribute('data-view')]; } }); viewWorker(el, wid); }
        else v.fn(el);
        flush();
      } catch (e) {
        el.appendChild(h('div', { class: 'fatal', text: 'This view could not be drawn: ' + (e && e.message ? e.message : e) }));
        if (window.console) console.warn(e);
      }
      rendered[key] = el;
      timing.views[key] = performance.now() - t;
    }
    el.hidden = false;
    charts.forEach(function (c) { if (el.contains(c.getDom())) c.resize(); });
    if (q != null) Array.prototype.forEach.call(el.querySelectorAll('.tbl-wrap'), function (t2) { if (t2._setFilter) t2._setFilter(q); });
    document.title = (id === 'worker' ? wid : (v.label)) + ' · PerfTracker report';
    if (!window.__ptBooting) window.scrollTo(0, 0);
  }

  var timing = { views: {}, charts: [] };
  window.__ptTiming = timing;

  function start(rep) {
    var t1 = performance.now();
    if (!obj(rep)) throw new Error('the report is not a JSON object');
    M = buildModel(rep);
    if (obj(rep.Compare)) VIEWS = compareViews();
    timing.model = performance.now() - t1;
    var tabs = document.getElementById('tabs');
    VIEWS.forEach(function (v) {
      if (v.when && !v.when()) return;
      var n = v.count ? v.count() : 0;
      var b = h('button', { type: 'button', role: 'tab', 'data-tab': v.id, 'aria-selected': 'false', onclick: function () { location.hash = '#' + v.id; } },
        v.label, n ? h('span', { class: 'count' + (v.neutral ? '' : ' bad'), text: String(n) }) : null);
      tabBtn[v.id] = b;
      tabs.appendChild(b);
    });
    var ld = document.getElementById('loading');
    if (ld) ld.remove();
    window.__ptBooting = true;
    route();
    window.__ptBooting = false;
    window.addEventListener('hashchange', route);
    var gen = document.querySelector('meta[name="generator"]');
    var ver = gen ? String(gen.getAttribute('content') || '').replace(/^perftracker /, '') : '';
    var foot = obj(rep.Compare) ? h('footer', null, 'PerfTracker ' + ver + ' comparison · BASELINE and NEW') :
      h('footer', null, 'PerfTracker ' + ver + ' report · ' + plural(M.workers.length, 'worker') + (M.hasDisplay ? '' : ' · an older report: some charts are approximate'));
    document.body.appendChild(foot);
    timing.total = performance.now() - t0;
    timing.ready = performance.now();   // since navigation start
    document.documentElement.setAttribute('data-ready', '1');
    if (performance.mark) performance.mark('pt-ready');
  }

  function fail(e) {
    var main = document.getElementById('main');
    main.textContent = '';
    main.appendChild(h('div', { class: 'fatal', id: 'fatal', text: 'The report could not be shown: ' + (e && e.message ? e.message : String(e)) }));
    document.documentElement.setAttribute('data-ready', 'error');
  }

  function load() {
    var el = document.getElementById('pt-report');
    var text = el ? el.textContent : '';
    if (text && text.trim() && text.indexOf('@@REPORT' + '@@') < 0) {
      var t = performance.now();
      var rep = JSON.parse(text);
      timing.parse = performance.now() - t;
      return Promise.resolve(rep);
    }
    if (location.protocol === 'file:') return Promise.reject(new Error('no report is embedded in this page; open it through `perftracker display DIR` or `python3 app.py`'));
    return fetch('report.json').then(function (r) {
      if (!r.ok) throw new Error('report.json: HTTP ' + r.status);
      return r.json();
    });
  }

  function boot() {
    load().then(function (rep) {
      try { start(rep); } catch (e) { fail(e); }
    }, fail);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();
})();
