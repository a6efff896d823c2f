/*
 * model.js - PerfDisplay: the report normalised for the views (PT.M):
 * workers in rank order with their step times, the findings attached to
 * the workers they name, the worker x function heatmap matrix and the
 * short names of every function the page shows.  Built once by main.js.
 */
(function (PT) {
  'use strict';
  var K_ABN_UTIL = PT.K_ABN_UTIL, K_BN = PT.K_BN, K_DETAIL = PT.K_DETAIL, K_MAJOR = PT.K_MAJOR,
    K_MED_COST = PT.K_MED_COST, K_OTHERS = PT.K_OTHERS, collator = PT.collator, isNum = PT.isNum,
    keys = PT.keys, mad = PT.mad, median = PT.median, obj = PT.obj, shortNames = PT.shortNames;

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

  PT.buildModel = buildModel;
}(PT));
