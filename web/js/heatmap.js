/*
 * heatmap.js - PerfDisplay: the worker x function heatmap view: each
 * cell's deviation from its column's median, rows by time above the
 * medians or by rank, and the cells at least 20% from the median.
 */
(function (PT) {
  'use strict';
  var add = PT.add, h = PT.h, isNum = PT.isNum, num = PT.num, signedPct = PT.signedPct, chart = PT.chart,
    empty = PT.empty, fnName = PT.fnName, howto = PT.howto, queue = PT.queue, shortName = PT.shortName,
    table = PT.table, tipWorker = PT.tipWorker, workerLink = PT.workerLink, heatFmt = PT.heatFmt;

  function viewHeatmap(root) {
    var H = PT.M.heat;
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
      var wIndex = function (id) { var w = PT.M.byId[id]; return w ? w.index : 1e9; };
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
      var yNames = order.map(function (r) { var w = PT.M.byId[H.rows[r]]; return w && w.rank != null ? 'rank ' + w.rank : H.rows[r]; });
      var opt = {
        grid: { left: 90, right: nr > 60 ? 110 : 80, top: 10, bottom: 120 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var r = order[p.value[1]], fj = cols[p.value[0]];
          var w = PT.M.byId[H.rows[r]] || { id: H.rows[r], rank: null };
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

  PT.viewHeatmap = viewHeatmap;
}(PT));
