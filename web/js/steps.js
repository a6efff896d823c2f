/*
 * steps.js - PerfDisplay: one worker's time: the "Time breakdown" view
 * (GPU time by class, idle time by cause) and the "Steps" view (each step
 * against the worker's median, the function its extra time is in).
 */
(function (PT) {
  'use strict';
  var add = PT.add, esc = PT.esc, h = PT.h, isNum = PT.isNum, keys = PT.keys, ms = PT.ms, num = PT.num,
    obj = PT.obj, pct = PT.pct, chart = PT.chart, empty = PT.empty, fnName = PT.fnName, howto = PT.howto,
    legend = PT.legend, medianLine = PT.medianLine, queue = PT.queue, table = PT.table,
    workerLink = PT.workerLink, zoomFor = PT.zoomFor;

  /* ---- One worker's time (issue 10): "Time breakdown" and "Steps" ------
     Kept in their own functions: where each worker's GPU time goes
     (compute, communication not overlapped with compute, memory, idle and
     the idle time by cause) and the per-step view (each step against the
     worker's median step, the function its extra time is in). */
  var TB_PARTS = [['compute (ms)', 'compute', '#4e79a7'], ['communication not overlapped (ms)', 'communication not overlapped with compute', '#f28e2b'],
    ['memory (ms)', 'memory operations', '#76b7b2'], ['idle (ms)', 'idle', '#d0d7de']];
  var TB_CAUSES = [['blocking sync', '#cf222e'], ['data loader', '#b07aa1'], ['kernel launch', '#edc948'], ['other host work', '#9c755f'], ['no CPU activity', '#bab0ac']];
  function tbRows() {
    var tb = obj(PT.M.rep[K.TIME_BREAKDOWN]) || {};
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
        xAxis: { type: 'category', data: rows.map(function (r) { var w = PT.M.byId[r.id]; return w && w.rank != null ? String(w.rank) : r.id; }), name: 'rank', nameLocation: 'middle', nameGap: 24 },
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
      tbChart(rows, TB_CAUSES, 'chart-tb-idle', 'GPU idle time by cause', function (r, k) { var c = obj(r[K.IDLE_BY_CAUSE_MS]) || {}; return isNum(c[k]) ? c[k] : 0; })));
    add(root, table({ title: 'Time breakdown per worker', rows: rows, sort: ['idle', -1], placeholder: 'Filter by worker…', cols: [
      { key: 'id', label: 'worker', fmt: function (v) { return workerLink(v); } },
      { key: 'busy', label: 'GPU busy', num: true, get: function (r) { return r[K.GPU_BUSY]; }, fmt: function (v) { return pct(v, 1); } },
      { key: 'cu', label: 'GPU compute utilization', num: true, get: function (r) { return r[K.GPU_COMPUTE_UTILIZATION]; }, fmt: function (v) { return pct(v, 1); } },
      { key: 'comm', label: 'communication not overlapped', num: true, get: function (r) { return r[K.COMMUNICATION_NOT_OVERLAPPED_MS]; }, fmt: ms },
      { key: 'idle', label: 'idle', num: true, get: function (r) { return r[K.IDLE_MS]; }, fmt: ms },
      { key: 'top', label: 'largest idle cause', get: function (r) { var c = obj(r[K.IDLE_BY_CAUSE_MS]) || {}; var b = null; keys(c).forEach(function (k) { if (b == null || c[k] > c[b]) b = k; }); return b || ''; } },
      { key: 'fn', label: 'CPU function during idle', get: function (r) { var f = (r[K.CPU_FUNCTIONS_DURING_IDLE] || [])[0]; return f ? f[K.FUNCTION] : ''; }, fmt: function (v) { return v ? fnName(v) : '–'; } },
      { key: 'short', label: 'kernels under 10 us', num: true, get: function (r) { return r[K.KERNELS_UNDER_10_US]; }, fmt: function (v) { return pct(v, 1); } },
      { key: 'lpm', label: 'launches per ms', num: true, get: function (r) { return r[K.LAUNCHES_PER_MS]; }, fmt: function (v) { return isNum(v) ? v.toFixed(1) : '–'; } }] }));
  }
  function viewSteps(root) {
    var st = obj(PT.M.rep[K.STEPS]) || {};
    var ids = keys(st);
    add(root, h('h1', { text: 'Step by step' }));
    add(root, howto('Steps', [
      ['slow step', 'A step longer than the worker\'s typical step (the median of its steps that are not slow) by more than 10% and by more than 3.5 of their robust deviations, or by more than 25%.'],
      ['function', 'For each step longer than the median: the function whose time in that step exceeds its median in the other steps by the most (a GPU kernel when one explains half of the extra time, else the most specific CPU stack).']]));
    var rows = [];
    ids.forEach(function (id) {
      var w = obj(st[id]) || {};
      (Array.isArray(w[K.STEPS_LC]) ? w[K.STEPS_LC] : []).forEach(function (x) {
        rows.push({ worker: id, number: x[K.NUMBER], ms: x[K.MS], extra: x[K.EXTRA_MS], slow: !!x[K.SLOW], fn: x[K.FUNCTION] || '', fms: x[K.FUNCTION_MS], fmed: x[K.FUNCTION_OTHER_STEPS_MEDIAN_MS] });
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
        xAxis: { type: 'category', data: rows.map(function (r) { return (ids.length > 1 ? (PT.M.byId[r.worker] && PT.M.byId[r.worker].rank != null ? PT.M.byId[r.worker].rank : r.worker) + ':' : '') + r.number; }), name: 'step', nameLocation: 'middle', nameGap: 24 },
        yAxis: { type: 'value', name: 'ms' },
        dataZoom: zoomFor(rows.length),
        series: [{ type: 'bar', barMaxWidth: 28, markLine: ids.length === 1 ? medianLine(first[K.MEDIAN_MS]) : undefined,
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

  PT.viewBreakdown = viewBreakdown;
  PT.viewSteps = viewSteps;
}(PT));
