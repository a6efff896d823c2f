/*
 * core.js - PerfDisplay's base: the page's one namespace object (PT), into
 * which every module of web/js registers what the others use, the page's
 * shared state (PT.M, the model; PT.charts, the live charts), DOM building
 * (h, add, esc), number formats and the report's section key names.
 * First of the modules that mk/display.mk concatenates into the page.
 *
 * Safety: every name from the report (kernels, Python frames, workers) is
 * put in the DOM as text (textContent / setAttribute), never as markup;
 * chart tooltips are HTML, so they go through esc().
 */
var PT = {};   // the page's one namespace: each module below registers into it
(function (PT) {
  'use strict';

  PT.M = null;        // the normalised report (model.js), set by main.js
  PT.charts = [];     // live chart instances (resized with the window)

  var t0 = performance.now();
  var CLASSES = ['compute', 'communication', 'memory', 'runtime', 'python', 'idle'];
  var CLASS_COLOR = { compute: '#4e79a7', communication: '#f28e2b', memory: '#59a14f',
    runtime: '#e15759', python: '#b07aa1', idle: '#bab0ac' };
  /* a view's report section (K: the keys table, web/js/keys.js) */
  var SECTION = { compute: K.GPU_COMPUTE, memory: K.GPU_MEMORY_OPERATIONS, communication: K.COMMUNICATION,
    runtime: K.CUDA_RUNTIME, python: K.PYTHON_FUNCTIONS };

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
  /* The median of the numbers in xs, for what the page draws and nothing
     else: reference lines, the heatmap's colour scale, the call tree's and
     a worker's median columns.  No rule is decided with it: slow steps and
     outliers come from the report (docs/display.md). */
  function drawMedian(xs) {
    var a = xs.filter(isNum).sort(function (p, q) { return p - q; });
    var n = a.length;
    if (!n) return NaN;
    return n % 2 ? a[(n - 1) >> 1] : (a[n / 2 - 1] + a[n / 2]) / 2;
  }
  /* v formatted by its unit, one of the report's units (src/report/unit.h:
     PT_UNIT_NAMES); an unknown or empty unit: the plain number. */
  function fmtUnit(v, unit) {
    if (!isNum(v)) return v == null ? '–' : String(v);
    switch (unit) {
    case 'ms': return ms(v);
    case 'ms per step': return ms(v) + ' per step';
    case 'us': return ms(v / 1000);
    case 'share': return pct(v);
    case 'x': return v.toFixed(v < 10 ? 2 : 0) + '×';
    case 'count': return Math.round(v) === v ? String(v) : num(v);
    case 'GB/s': return num(v) + ' GB/s';
    case 'bytes': return Math.round(v) === v ? String(v) + ' B' : num(v) + ' B';
    case 's': return num(v) + ' s';
    case '%': return v.toFixed(1) + '%';
    default: return num(v);
    }
  }
  /* The unit of a report key from the keys table (KEY_UNIT, made from
     src/report/keys.def), '' when the table does not give one. */
  function keyUnit(key) {
    return typeof KEY_UNIT === 'object' && Object.prototype.hasOwnProperty.call(KEY_UNIT, key) ? KEY_UNIT[key] : '';
  }
  function plural(n, one, many) { return n + ' ' + (n === 1 ? one : (many || one + 's')); }
  function obj(x) { return x && typeof x === 'object' && !Array.isArray(x) ? x : null; }
  function keys(o) { return o ? Object.keys(o) : []; }

  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

  var timing = { views: {}, charts: [] };
  window.__ptTiming = timing;

  PT.h = h;
  PT.add = add;
  PT.esc = esc;
  PT.isNum = isNum;
  PT.pct = pct;
  PT.ms = ms;
  PT.lbl = lbl;
  PT.num = num;
  PT.signedPct = signedPct;
  PT.drawMedian = drawMedian;
  PT.fmtUnit = fmtUnit;
  PT.keyUnit = keyUnit;
  PT.plural = plural;
  PT.obj = obj;
  PT.keys = keys;
  PT.t0 = t0;
  PT.CLASSES = CLASSES;
  PT.CLASS_COLOR = CLASS_COLOR;
  PT.SECTION = SECTION;
  PT.collator = collator;
  PT.timing = timing;
}(PT));
