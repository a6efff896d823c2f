/*
 * main.js - PerfDisplay: the views' table (tabs, counts), the routing
 * (#view, #view?q=filter, #worker/ID), loading the embedded or served
 * report and starting the page.  Last of the modules, it boots the page.
 *
 * Data: the report is embedded in <script id="pt-report">; when that block
 * is empty (page served next to report.json) it is fetched.  The five seed
 * sections, "workers", "findings" and "Hang" are read as written by
 * `perftracker diagnose`; the optional "display" key (docs/display.md) adds
 * per-step times, class breakdowns and the heatmap matrix.  Without it the
 * page falls back to what the sections carry.
 */
(function (PT) {
  'use strict';
  var h = PT.h, keys = PT.keys, obj = PT.obj, plural = PT.plural, t0 = PT.t0, timing = PT.timing,
    flush = PT.flush, buildModel = PT.buildModel, isWeak = PT.isWeak, commRows = PT.commRows,
    viewComm = PT.viewComm, viewCompute = PT.viewCompute, viewMemory = PT.viewMemory,
    viewRuntime = PT.viewRuntime, viewPython = PT.viewPython, viewWorker = PT.viewWorker,
    viewWorkers = PT.viewWorkers, viewHeatmap = PT.viewHeatmap, viewOverview = PT.viewOverview,
    viewBreakdown = PT.viewBreakdown, viewSteps = PT.viewSteps, cpData = PT.cpData,
    viewCritPath = PT.viewCritPath, tlData = PT.tlData, viewTimeline = PT.viewTimeline,
    viewHang = PT.viewHang, hwData = PT.hwData, viewHardware = PT.viewHardware,
    compareViews = PT.compareViews;

  var VIEWS = [
    { id: 'overview', label: 'Overview', fn: viewOverview, count: function () { return PT.M.findings.filter(function (f) { return !isWeak(f); }).length; } },
    { id: 'workers', label: 'Workers', fn: viewWorkers, count: function () { return PT.M.workers.length; }, neutral: true },
    { id: 'compute', label: 'GPU Compute', fn: viewCompute, count: function () { var g = obj(PT.M.rep[K.GPU_COMPUTE]) || {}; return (Array.isArray(g[K.WORKERS_WITH_POTENTIAL_GPU_ISSUES]) ? g[K.WORKERS_WITH_POTENTIAL_GPU_ISSUES].length : 0) + keys(obj(g[K.WORKERS_WITH_ABNORMAL_GPU_UTILIZATION])).length; } },
    { id: 'memory', label: 'Memory ops', fn: viewMemory, count: function () { return abnCount(K.GPU_MEMORY_OPERATIONS); } },
    { id: 'communication', label: 'Communication', fn: viewComm, count: function () { return commRows().filter(function (r) { return r.abnormal; }).length; } },
    { id: 'runtime', label: 'CUDA Runtime', fn: viewRuntime, count: function () { return abnCount(K.CUDA_RUNTIME); } },
    { id: 'python', label: 'Python', fn: viewPython, count: function () { return keys(obj(PT.M.rep[K.PYTHON_FUNCTIONS])).length; }, neutral: true },
    { id: 'heatmap', label: 'Heatmap', fn: viewHeatmap },
    { id: 'breakdown', label: 'Time breakdown', fn: viewBreakdown, when: function () { return !!obj(PT.M.rep[K.TIME_BREAKDOWN]); }, neutral: true },
    { id: 'steps', label: 'Steps', fn: viewSteps, when: function () { return !!obj(PT.M.rep[K.STEPS]); }, count: function () { var n = 0; keys(obj(PT.M.rep[K.STEPS])).forEach(function (id) { n += (PT.M.rep[K.STEPS][id][K.SLOW_STEPS] || []).length; }); return n; } },
    { id: 'critpath', label: K.CRITICAL_PATH, fn: viewCritPath, when: function () { return !!cpData(); }, count: function () { return cpData().slow.length; } },
    { id: 'timeline', label: 'Timeline', fn: viewTimeline, when: function () { return !!tlData(); }, count: function () { return tlData().findings.length; } },
    { id: 'hardware', label: 'Hardware', fn: viewHardware, when: function () { return !!hwData(); }, neutral: true, count: function () { return keys(hwData().workers).length; } },
    { id: 'hang', label: 'Hang', fn: viewHang, when: function () { return !!PT.M.hang; }, count: function () { return PT.M.hang && PT.M.hang[K.HUNG] ? 1 : 0; } }
  ];
  function abnCount(name) {
    var sec = obj(PT.M.rep[name]) || {};
    var n = 0;
    keys(sec).forEach(function (op) { n += keys(obj(obj(sec[op]) && sec[op][K.ABNORMAL_WORKERS])).length; });
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
    PT.charts.forEach(function (c) { if (el.contains(c.getDom())) c.resize(); });
    if (q != null) Array.prototype.forEach.call(el.querySelectorAll('.tbl-wrap'), function (t2) { if (t2._setFilter) t2._setFilter(q); });
    document.title = (id === 'worker' ? wid : (v.label)) + ' · PerfTracker report';
    if (!window.__ptBooting) window.scrollTo(0, 0);
  }

  function start(rep) {
    var t1 = performance.now();
    if (!obj(rep)) throw new Error('the report is not a JSON object');
    PT.M = buildModel(rep);
    if (obj(rep[K.COMPARE])) VIEWS = compareViews();
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
    var foot = obj(rep[K.COMPARE]) ? h('footer', null, 'PerfTracker ' + ver + ' comparison · BASELINE and NEW') :
      h('footer', null, 'PerfTracker ' + ver + ' report · ' + plural(PT.M.workers.length, 'worker') + (PT.M.hasDisplay ? '' : ' · an older report: some charts are approximate'));
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
}(PT));
