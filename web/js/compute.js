/*
 * compute.js - PerfDisplay: the GPU Compute view (utilization, major
 * kernels, low occupancy, workers with GPU issues) and the two ratio
 * sections drawn alike: GPU memory operations and CUDA Runtime.
 */
(function (PT) {
  'use strict';
  var add = PT.add, h = PT.h, isNum = PT.isNum, keys = PT.keys, lbl = PT.lbl, ms = PT.ms, num = PT.num,
    obj = PT.obj, pct = PT.pct, signedPct = PT.signedPct, empty = PT.empty, fnName = PT.fnName,
    howto = PT.howto, stat = PT.stat, table = PT.table, workerLink = PT.workerLink;

  function viewCompute(root) {
    var gc = obj(PT.M.rep[K.GPU_COMPUTE]);
    add(root, h('h1', { text: 'GPU Compute' }));
    add(root, howto('GPU Compute', [
      [K.MIN_MEDIAN_MAX_GPU_UTIL, 'The lowest, median and highest GPU utilization across all workers, as the seed defines it: GPU busy, the share of the profiled window in which at least one kernel (compute or communication) was running. Communication kernels that only wait for a late peer count, so victims of a straggler look busy.'],
      [K.MIN_MEDIAN_MAX_GPU_COMPUTE_UTIL, 'GPU compute utilization: the share of the window in which at least one compute kernel was running (communication kernels and memory copies excluded).'],
      [K.WORKERS_WITH_ABNORMAL_GPU_UTILIZATION, 'Empty when no worker\'s utilization stands out from the others; otherwise the outlying workers and their utilization.'],
      [K.MAJOR_KERNEL_EXECUTIONS, 'The compute kernels that cost the most time, with the median cost per execution and the bottleneck ratio (share of end-to-end time the kernel owns, overlap with nothing higher excluded).'],
      [K.WORKERS_WITH_POTENTIAL_GPU_ISSUES, 'Workers whose kernels run slower than the same kernels on the other workers. Empty when all workers perform alike.'],
      [K.DETAILED_REPORT, 'Present when some worker has potential GPU issues: which worker ran which kernel slower than normal, and by how much.']]));
    if (!gc) { add(root, empty('This report has no GPU Compute section.')); return; }
    var u = gc[K.MIN_MEDIAN_MAX_GPU_UTIL];
    if (Array.isArray(u)) add(root, h('div', { class: 'stats' }, stat('min GPU utilization (busy)', pct(u[0], 1)), stat('median', pct(u[1], 1)), stat('max', pct(u[2], 1))));
    var cu = gc[K.MIN_MEDIAN_MAX_GPU_COMPUTE_UTIL];
    if (Array.isArray(cu)) add(root, h('div', { class: 'stats', id: 'compute-util' }, stat('min GPU compute utilization', pct(cu[0], 1)), stat('median', pct(cu[1], 1)), stat('max', pct(cu[2], 1))));
    var low = obj(gc[K.LOW_OCCUPANCY_KERNELS]);
    if (low) add(root, table({ title: 'Heavy kernels at low occupancy', sort: ['bn', -1], rows: keys(low).map(function (k) { var r = obj(low[k]) || {}; return { kernel: k, bn: r[K.BOTTLENECK_RATIO], occ: r[K.EST_ACHIEVED_OCCUPANCY_PCT], bps: r[K.BLOCKS_PER_SM], regs: r[K.REGISTERS_PER_THREAD], smem: r[K.SHARED_MEMORY] }; }),
      cols: [{ key: 'kernel', label: 'kernel', fmt: function (v) { return fnName(v); } },
        { key: 'bn', label: K.BOTTLENECK_RATIO, num: true, fmt: function (v) { return pct(v); } },
        { key: 'occ', label: 'est. achieved occupancy %', num: true, fmt: function (v) { return isNum(v) && v >= 0 ? v.toFixed(0) + '%' : '–'; } },
        { key: 'bps', label: 'blocks per SM', num: true, fmt: function (v) { return isNum(v) ? v.toFixed(2) : '–'; } },
        { key: 'regs', label: 'registers per thread', num: true, fmt: function (v) { return isNum(v) ? String(v) : '–'; } },
        { key: 'smem', label: 'shared memory (bytes)', num: true, fmt: function (v) { return isNum(v) ? String(v) : '–'; } }] }));
    var au = obj(gc[K.WORKERS_WITH_ABNORMAL_GPU_UTILIZATION]) || {};
    add(root, table({ title: 'Workers with abnormal GPU utilization', empty: 'None: no worker\'s GPU utilization stands out.', sort: ['util', 1],
      rows: keys(au).map(function (id) { return { worker: id, util: au[id], dev: isNum(au[id]) && PT.M.utilMedian ? au[id] / PT.M.utilMedian - 1 : NaN }; }),
      cols: [{ key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'util', label: 'GPU utilization', num: true, fmt: function (v) { return pct(v, 1); } },
        { key: 'dev', label: 'vs median', num: true, fmt: signedPct }] }));
    var mk = obj(gc[K.MAJOR_KERNEL_EXECUTIONS]) || {};
    add(root, table({ title: 'Major kernel executions', sort: ['bn', -1], placeholder: 'Filter kernels…',
      rows: keys(mk).map(function (k) { var r = obj(mk[k]) || {}; return { kernel: k, cost: r[K.MEDIAN_COST_PER_EXECUTION_MS], bn: r[K.BOTTLENECK_RATIO] }; }),
      cols: [{ key: 'kernel', label: 'kernel (name + grid|block)', fmt: function (v) { return fnName(v); } },
        { key: 'cost', label: K.MEDIAN_COST_PER_EXECUTION_MS, num: true, fmt: ms },
        { key: 'bn', label: lbl(K.BOTTLENECK_RATIO), num: true, fmt: function (v) { return pct(v); } }] }));
    var iss = Array.isArray(gc[K.WORKERS_WITH_POTENTIAL_GPU_ISSUES]) ? gc[K.WORKERS_WITH_POTENTIAL_GPU_ISSUES] : [];
    add(root, h('h3', { text: K.WORKERS_WITH_POTENTIAL_GPU_ISSUES }));
    add(root, iss.length ? h('div', { class: 'card' }, iss.map(function (id) { return workerLink(String(id), 'bad'); })) : h('div', { class: 'card muted', text: 'None: all workers run their kernels at the same speed.' }));
    var det = obj(gc[K.DETAILED_REPORT]) || {};
    var rows = [];
    keys(det).forEach(function (wid) {
      keys(obj(det[wid])).forEach(function (k) {
        var r = obj(det[wid][k]) || {};
        var sb = r[K.SLOWER_BY];
        var sbn = typeof sb === 'number' ? sb : parseFloat(sb);
        rows.push({ worker: wid, kernel: k, mine: r[K.MEDIAN_COST_PER_EXECUTION_MS], others: r[K.MEDIAN_OF_OTHER_WORKERS_MS], slower: sb, slowerN: isNum(sbn) ? sbn : null });
      });
    });
    add(root, table({ title: K.DETAILED_REPORT, empty: 'Empty: no worker has potential GPU issues.', sort: ['slowerN', -1], rows: rows, placeholder: 'Filter by worker or kernel…',
      cols: [{ key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'kernel', label: 'kernel', fmt: function (v) { return fnName(v); } },
        { key: 'mine', label: K.MEDIAN_COST_PER_EXECUTION_MS, num: true, fmt: ms },
        { key: 'others', label: K.MEDIAN_OF_OTHER_WORKERS_MS, num: true, fmt: ms },
        { key: 'slowerN', label: 'slower by', num: true, fmt: function (v, r) { return r.slower == null ? '–' : String(r.slower); } }] }));
  }

  function ratioSection(root, name, explain, extraCols) {
    var sec = obj(PT.M.rep[name]);
    add(root, h('h1', { text: name }));
    add(root, explain);
    if (!sec) { add(root, empty('This report has no ' + name + ' section.')); return; }
    var ops = keys(sec).map(function (op) {
      var r = obj(sec[op]) || {};
      var ab = obj(r[K.ABNORMAL_WORKERS]) || {};
      var o = { op: op, avg: r[K.AVG_BOTTLENECK_RATIO], n: keys(ab).length, ab: ab };
      (extraCols || []).forEach(function (c) { o[c[0]] = r[c[1]]; });
      return o;
    });
    var cols = [{ key: 'op', label: name === K.CUDA_RUNTIME ? 'API' : 'operation', fmt: function (v) { return fnName(v); } },
      { key: 'avg', label: lbl(K.AVG_BOTTLENECK_RATIO), num: true, fmt: function (v) { return pct(v); } }];
    (extraCols || []).forEach(function (c) { cols.push({ key: c[0], label: lbl(c[1]), num: true, fmt: function (v) { return pct(v); } }); });
    cols.push({ key: 'n', label: 'abnormal workers', num: true, fmt: function (v) { return v ? h('span', { class: 'badge bad', text: String(v) }) : '0'; } });
    add(root, table({ title: name, rows: ops, sort: ['avg', -1], cols: cols }));
    var flat = [];
    ops.forEach(function (o) { keys(o.ab).forEach(function (w) { flat.push({ op: o.op, worker: w, ratio: o.ab[w], vs: isNum(o.avg) && o.avg > 0 && isNum(o.ab[w]) ? o.ab[w] / o.avg : NaN }); }); });
    add(root, table({ title: K.ABNORMAL_WORKERS, rows: flat, sort: ['ratio', -1], empty: 'No worker is above the threshold.', placeholder: 'Filter by worker or ' + (name === K.CUDA_RUNTIME ? 'API' : 'operation') + '…',
      cols: [{ key: 'op', label: name === K.CUDA_RUNTIME ? 'API' : 'operation', fmt: function (v) { return fnName(v); } },
        { key: 'worker', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'ratio', label: 'bottleneck ratio', num: true, fmt: function (v) { return pct(v); } },
        { key: 'vs', label: '× average', num: true, fmt: function (v) { return isNum(v) ? v.toFixed(2) + '×' : '–'; } }] }));
  }

  function viewMemory(root) {
    ratioSection(root, K.GPU_MEMORY_OPERATIONS, howto('GPU memory operations', [
      [K.AVG_BOTTLENECK_RATIO, 'The average share of end-to-end time spent in this memory operation (memcpy/memset) during the profiled window, across workers.'],
      [K.ABNORMAL_WORKERS, 'Workers whose bottleneck ratio for this operation is above 0.01 (1%), the threshold at which a memory operation is considered abnormal, with their ratio.']]));
  }
  function viewRuntime(root) {
    ratioSection(root, K.CUDA_RUNTIME, howto('CUDA Runtime', [
      [K.AVG_BOTTLENECK_RATIO, 'The average share of end-to-end time spent in this CUDA runtime call, excluding time that overlaps with GPU computation, communication or memory operations.'],
      [K.AVG_EXECUTION_RATIO, 'The average time spent in the call as a share of the whole monitoring duration, overlap included.'],
      [K.ABNORMAL_WORKERS, 'Workers whose bottleneck ratio for this call is above 0.01 (1%), the threshold at which a runtime call is considered abnormal.']]), [['exec', K.AVG_EXECUTION_RATIO]]);
  }

  PT.viewCompute = viewCompute;
  PT.viewMemory = viewMemory;
  PT.viewRuntime = viewRuntime;
}(PT));
