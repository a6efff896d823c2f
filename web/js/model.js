/*
 * model.js - PerfDisplay: the report normalised for the views (PT.M):
 * workers in rank order with their step times, the findings attached to
 * the workers they name, the worker x function heatmap matrix and the
 * short names of every function the page shows.  Built once by main.js.
 */
(function (PT) {
  'use strict';
  var collator = PT.collator, drawMedian = PT.drawMedian, isNum = PT.isNum, keyUnit = PT.keyUnit,
    keys = PT.keys, obj = PT.obj;
  /* above this many workers the per-worker charts draw PT.M.drawn */
  var DRAW_ALL = 2000;

  function buildModel(rep) {
    var m = { rep: rep, workers: [], byId: Object.create(null), findings: [], hasDisplay: false };
    var disp = obj(rep[K.DISPLAY]) || {};
    var dw = obj(disp[K.WORKERS]) || {};
    var wr = obj(rep[K.WORKERS]) || {};
    m.hasDisplay = !!obj(rep[K.DISPLAY]);
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
      var st = r[K.STEPS_LC];
      w.rank = isNum(r[K.RANK]) ? r[K.RANK] : null;
      w.host = r[K.HOST] || '';
      w.pid = isNum(r[K.PID]) ? r[K.PID] : null;
      w.file = r[K.FILE] || '';
      /* "steps": a count, or the list of profiled step numbers */
      w.steps = isNum(st) ? st : Array.isArray(st) ? st.length : null;
      w.stepNumbers = Array.isArray(st) ? st : null;
      w.window = isNum(r[K.WINDOW_IN_MS]) ? r[K.WINDOW_IN_MS] : null;
      w.util = isNum(r[K.GPU_UTILIZATION]) ? r[K.GPU_UTILIZATION] : null;
      w.error = r[K.ERROR] || null;
    });
    keys(dw).forEach(function (id) {
      var d = obj(dw[id]) || {};
      var w = ensure(id);
      if (Array.isArray(d[K.STEP_MS])) w.stepMs = d[K.STEP_MS].filter(isNum);
      if (obj(d[K.CLASS_MS])) w.classMs = d[K.CLASS_MS];
      if (Array.isArray(d[K.STEP_NUMBERS])) w.stepNumbers = d[K.STEP_NUMBERS];
      /* the diagnosis's own slow-step rule (absent in older reports: no marking) */
      w.slowStep = d[K.SLOW] === true;
    });
    var gc = obj(rep[K.GPU_COMPUTE]) || {};
    keys(obj(gc[K.WORKERS_WITH_ABNORMAL_GPU_UTILIZATION])).forEach(function (id) {
      var w = ensure(id);
      if (w.util == null && isNum(gc[K.WORKERS_WITH_ABNORMAL_GPU_UTILIZATION][id])) w.util = gc[K.WORKERS_WITH_ABNORMAL_GPU_UTILIZATION][id];
    });
    m.workers.sort(function (a, b) {
      if (a.rank != null && b.rank != null && a.rank !== b.rank) return a.rank - b.rank;
      if ((a.rank == null) !== (b.rank == null)) return a.rank == null ? 1 : -1;
      return collator.compare(a.id, b.id);
    });
    m.workers.forEach(function (w, i) { w.index = i; });

    /* step time: per-step list when the display key has it, else window / steps
       (the median is what the charts draw; which step is slow the report says) */
    m.stepExact = false;
    m.workers.forEach(function (w) {
      if (w.stepMs && w.stepMs.length) { w.step = drawMedian(w.stepMs); m.stepExact = true; }
      else if (isNum(w.window) && w.steps > 0) w.step = w.window / w.steps;
      else w.step = null;
      w.slowStep = !!w.slowStep && isNum(w.step);
    });
    m.stepMedian = drawMedian(m.workers.map(function (w) { return w.step; }));
    /* "step threshold (ms)": a number, null (too few workers to judge) or
       absent (an older report, which marks no worker slow) */
    m.slowJudged = K.STEP_THRESHOLD_MS in disp;
    m.stepLimit = isNum(disp[K.STEP_THRESHOLD_MS]) ? disp[K.STEP_THRESHOLD_MS] : null;

    m.abnUtil = obj(gc[K.WORKERS_WITH_ABNORMAL_GPU_UTILIZATION]) || {};
    m.utilMedian = drawMedian(m.workers.map(function (w) { return w.util; }));

    m.findings = (Array.isArray(rep[K.FINDINGS]) ? rep[K.FINDINGS] : []).filter(obj).slice();
    m.findings.sort(function (a, b) { return (isNum(a[K.RANK]) ? a[K.RANK] : 1e9) - (isNum(b[K.RANK]) ? b[K.RANK] : 1e9); });
    m.findings.forEach(function (f) {
      (Array.isArray(f[K.WORKERS]) ? f[K.WORKERS] : []).forEach(function (id) {
        var w = m.byId[id];
        if (w && w.flags.indexOf(f) < 0) w.flags.push(f);
      });
    });
    /* The workers the per-worker charts draw.  At scale the report keeps
       per-worker rows for 1,000 of them (docs/diagnose.md "At scale": the
       named ones, then workers spread over the job) and the charts draw
       those and every worker a finding flags: 100,000 points took the
       Overview 1 s. */
    m.drawn = m.workers;
    if (m.hasDisplay && m.workers.length > DRAW_ALL) {
      var sub = m.workers.filter(function (w) { return w.classMs || w.stepMs || w.flags.length; });
      if (sub.length && sub.length < m.workers.length) m.drawn = sub;
    }
    m.hang = obj(rep[K.HANG]);
    m.errors = m.workers.filter(function (w) { return w.error; });
    m.heat = buildHeat(rep, m);
    /* short names of the function keys, made by the report's one name
       shortener (src/report/names.c); older reports have none: full names */
    m.short = obj(disp[K.SHORT]);
    return m;
  }

  /* The heatmap matrix: display.heatmap when present, else what the sections
     list per worker (values only known above the sections' thresholds). */
  function buildHeat(rep, m) {
    var hm = obj(obj(rep[K.DISPLAY]) && rep[K.DISPLAY][K.HEATMAP]);
    var funcs = [], rows = [], vals = [], exact = false, metric = '', unit = '';
    if (hm && Array.isArray(hm[K.FUNCTIONS]) && Array.isArray(hm[K.WORKERS]) && Array.isArray(hm[K.VALUE])) {
      funcs = hm[K.FUNCTIONS].map(function (f) {
        return typeof f === 'string' ? { key: f, cls: '' } : { key: String(f[K.KEY]), cls: f[K.CLASS] || '' };
      });
      rows = hm[K.WORKERS].map(String);
      vals = hm[K.VALUE];
      exact = true;
      metric = hm[K.METRIC] || 'value';
      /* its unit: the metric when it is one ("ms per step": ms in the cells),
         else the keys table's */
      unit = metric === 'ms per step' ? 'ms' : keyUnit(metric) || metric;
    } else {
      var cols = Object.create(null);
      var col = function (key, cls) {
        if (!(key in cols)) { cols[key] = funcs.length; funcs.push({ key: key, cls: cls }); }
        return cols[key];
      };
      var cells = [];
      var put = function (wid, key, cls, v) { if (isNum(v)) cells.push([wid, col(key, cls), v]); };
      var gc = obj(rep[K.GPU_COMPUTE]) || {};
      var det = obj(gc[K.DETAILED_REPORT]) || {};
      keys(det).forEach(function (wid) {
        keys(obj(det[wid])).forEach(function (k) {
          var r = obj(det[wid][k]) || {};
          if (isNum(r[K.MEDIAN_COST_PER_EXECUTION_MS]) && isNum(r[K.MEDIAN_OF_OTHER_WORKERS_MS]) && r[K.MEDIAN_OF_OTHER_WORKERS_MS] > 0)
            put(wid, k, 'compute', r[K.BOTTLENECK_RATIO] != null ? r[K.BOTTLENECK_RATIO] : null);
        });
      });
      [[K.GPU_MEMORY_OPERATIONS, 'memory'], [K.CUDA_RUNTIME, 'runtime']].forEach(function (p) {
        var sec = obj(rep[p[0]]) || {};
        keys(sec).forEach(function (op) {
          var ab = obj(obj(sec[op]) && sec[op][K.ABNORMAL_WORKERS]) || {};
          keys(ab).forEach(function (wid) { put(wid, op, p[1], ab[wid]); });
        });
      });
      var py = obj(rep[K.PYTHON_FUNCTIONS]) || {};
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
      unit = 'share';
    }
    /* relative deviation of each cell from its column's median */
    var nf = funcs.length;
    var med = new Array(nf);
    var j, i;
    for (j = 0; j < nf; j++) {
      var colv = [];
      for (i = 0; i < vals.length; i++) if (vals[i] && isNum(vals[i][j])) colv.push(vals[i][j]);
      med[j] = drawMedian(colv);
    }
    return { funcs: funcs, rows: rows, vals: vals, med: med, exact: exact, metric: metric, unit: unit };
  }

  PT.buildModel = buildModel;
}(PT));
