/*
 * communication.js - PerfDisplay: the Communication view: the
 * collectives grouped by link, algorithm and direction, a normal worker's
 * features and the abnormal workers (commRows, also read by a worker's
 * page and the tab count).
 */
(function (PT) {
  'use strict';
  var add = PT.add, fmtUnit = PT.fmtUnit, h = PT.h, isNum = PT.isNum, keyUnit = PT.keyUnit, keys = PT.keys,
    lbl = PT.lbl, num = PT.num, obj = PT.obj, empty = PT.empty, fnName = PT.fnName, howto = PT.howto,
    table = PT.table, workerLink = PT.workerLink;

  /* features in percent (0..100): no report unit says so yet (unit.h) */
  var commCache = null;
  function commRows() {
    if (commCache) return commCache;
    var sec = obj(PT.M.rep[K.COMMUNICATION]) || {};
    var rows = [];
    keys(sec).forEach(function (g) {
      keys(obj(sec[g])).forEach(function (k) {
        var e = obj(sec[g][k]) || {};
        var nw = obj(e[K.EXAMPLE_OF_NORMAL_WORKER]);
        var ab = Array.isArray(e[K.ABNORMAL_WORKERS]) ? e[K.ABNORMAL_WORKERS] : [];
        var mk = function (x, abnormal) {
          x = obj(x) || {};
          return { group: g, kernel: k, worker: x[K.WORKER] != null ? String(x[K.WORKER]) : '', diff: x[K.DIFFERENT_FROM_OTHER_WORKERS],
            features: obj(x[K.FEATURES]) || {}, abnormal: abnormal, nab: ab.length };
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
      [K.EXAMPLE_OF_NORMAL_WORKER, 'The normal behaviour of the kernel, taken from a typical worker: its bottleneck ratio (share of end-to-end time, overlap with computation excluded) and, when hardware samples cover it, the link\'s average throughput and its standard deviation.'],
      ['different from other workers', 'How far this worker\'s features are from the other workers\' (0: typical).'],
      [K.ABNORMAL_WORKERS, 'If not empty, the workers whose behaviour for this kernel differs from the others, with their features.']]));
    var p2p = PT.p2pCard();
    if (p2p) add(root, p2p);
    if (!obj(PT.M.rep[K.COMMUNICATION])) { add(root, empty('This report has no Communication section.')); return; }
    var rows = commRows();
    var fk = [];
    rows.forEach(function (r) { keys(r.features).forEach(function (k) { if (fk.indexOf(k) < 0) fk.push(k); }); });
    var fcols = fk.map(function (k) {
      return { key: 'f:' + k, label: lbl(k), num: true, get: function (r) { return r.features[k]; },
        fmt: function (v) { return keyUnit(k) ? fmtUnit(v, keyUnit(k)) : num(v); } };
    });
    var base = [{ key: 'group', label: 'group' }, { key: 'kernel', label: 'kernel', fmt: function (v) { return fnName(v); } }];
    add(root, table({ title: 'Collectives (example of a normal worker)', rows: rows.filter(function (r) { return !r.abnormal; }), sort: ['group', 1],
      cols: base.concat([{ key: 'worker', label: 'normal worker', fmt: function (v) { return v ? workerLink(v, null, true) : '–'; } }], fcols,
        [{ key: 'nab', label: 'abnormal workers', num: true, fmt: function (v) { return v ? h('span', { class: 'badge bad', text: String(v) }) : '0'; } }]) }));
    add(root, table({ title: K.ABNORMAL_WORKERS, rows: rows.filter(function (r) { return r.abnormal; }), sort: ['diff', -1], empty: 'No worker communicates differently from the others.', placeholder: 'Filter by worker, group or kernel…',
      cols: base.concat([{ key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v, null, true); } },
        { key: 'diff', label: 'different from other workers', num: true }], fcols) }));
  }

  PT.commRows = commRows;
  PT.viewComm = viewComm;
}(PT));
