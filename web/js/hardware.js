/*
 * hardware.js - PerfDisplay: the Hardware view: the node agent's series
 * of one chosen worker (GPU, links, CPU, memory), one chart per unit, its
 * profiled window shaded and its steps marked.
 */
(function (PT) {
  'use strict';
  var add = PT.add, esc = PT.esc, h = PT.h, isNum = PT.isNum, keys = PT.keys, ms = PT.ms, num = PT.num,
    obj = PT.obj, chart = PT.chart, empty = PT.empty, howto = PT.howto, legend = PT.legend,
    workerLink = PT.workerLink;

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
    var d = obj(PT.M.rep[K.DISPLAY]), hw = d && obj(d[K.HW]);
    return hw && obj(hw[K.WORKERS]) && keys(hw[K.WORKERS]).length ? hw : null;
  }
  function hwName(s) {
    var n = String(s[K.NAME]);
    if (n === 'cpu_util' && s[K.DEVICE] === -1) return 'cpu_util (all cores)';
    if (isNum(s[K.DEVICE]) && s[K.DEVICE] >= 0) n += ' gpu' + s[K.DEVICE];
    if (s[K.LABEL]) n += ' ' + s[K.LABEL];
    return n;
  }
  function hwCharts(wrap, id, hw) {
    wrap.textContent = '';
    var w = PT.M.byId[id] || { id: id, rank: hw[K.RANK], host: hw[K.HOST] };
    var series = Array.isArray(hw[K.SERIES]) ? hw[K.SERIES].filter(obj) : [];
    var win = isNum(hw[K.WINDOW_MS]) ? hw[K.WINDOW_MS] : null;
    var steps = [], acc = 0;
    (w.stepMs || []).forEach(function (s) { if (isNum(s)) { acc += s; steps.push(acc); } });
    add(wrap, h('p', { class: 'note' }, 'Worker ', workerLink(id), (hw[K.HOST] ? ' on ' + hw[K.HOST] : '') +
      ' · source ' + (hw[K.SOURCE] || '?') + ' · time in ms from the start of its profiled window' +
      (win != null ? ' (' + ms(win) + ', shaded' + (steps.length > 1 ? '; dashed lines end its steps' : '') + ')' : '') + '.'));
    if (hw[K.NOTE]) add(wrap, h('div', { class: 'banner warn' }, h('b', { text: 'Not sampled: ' }), String(hw[K.NOTE])));
    if (!series.length) { add(wrap, empty('No series for this worker.')); return; }
    HW_UNITS.forEach(function (u, ui) {
      var mine = series.filter(function (s) { return String(s[K.UNIT] || '') === u[0] && Array.isArray(s[K.T_MS]) && Array.isArray(s[K.V]); });
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
          for (k = 0; k < s[K.T_MS].length && k < s[K.V].length; k++)
            data.push([s[K.T_MS][k], isNum(s[K.V][k]) ? s[K.V][k] * u[3] : null]);
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
      ['which workers', 'Those the findings name first, then one per host, then the rest by rank (at most 16; ' + (isNum(hw[K.WORKERS_WITH_SAMPLES]) ? hw[K.WORKERS_WITH_SAMPLES] : '?') + ' had samples).']]));
    var ids = keys(hw[K.WORKERS]);
    var pick = ids[0];
    PT.M.findings.some(function (f) {
      var hit = (Array.isArray(f[K.WORKERS]) ? f[K.WORKERS] : []).filter(function (x) { return ids.indexOf(x) >= 0; })[0];
      if (hit) pick = hit;
      return !!hit;
    });
    var sel = h('select', { 'aria-label': 'worker' });
    ids.forEach(function (id) {
      var r = obj(hw[K.WORKERS][id]) || {};
      sel.appendChild(h('option', { value: id, text: (isNum(r[K.RANK]) ? 'rank ' + r[K.RANK] + ' · ' : '') + id + (r[K.HOST] ? ' (' + r[K.HOST] + ')' : '') }));
    });
    var wrap = h('div', { class: 'hw-charts' });
    /* #hardware?q=<worker id> selects a worker (the route's filter hook). */
    var ctl = h('div', { class: 'tbl-wrap hw-ctl' }, h('label', null, 'Worker: ', sel));
    function show(id) {
      if (!(id in hw[K.WORKERS])) return;
      sel.value = id;
      PT.charts = PT.charts.filter(function (c) { if (wrap.contains(c.getDom())) { c.dispose(); return false; } return true; });
      hwCharts(wrap, id, obj(hw[K.WORKERS][id]) || {});
    }
    ctl._setFilter = function (q) { show(String(q || '')); };
    sel.addEventListener('change', function () { show(sel.value); });
    add(root, ctl);
    add(root, wrap);
    show(pick);
  }

  PT.hwData = hwData;
  PT.viewHardware = viewHardware;
}(PT));
