/*
 * p2p.js - PerfDisplay: the point-to-point matrix (report "p2p",
 * docs/diagnose.md "Point to point"): one cell per (source rank,
 * destination rank) with its bandwidth, shaded by it, the pairs the report
 * marked slow in red, bytes, transfers and time in each cell's tooltip.
 * Drawn on the Communication view; the report decides what is slow.
 */
(function (PT) {
  'use strict';
  var h = PT.h, isNum = PT.isNum, ms = PT.ms;

  function rowsOf() {
    var a = PT.obj(PT.M.rep[K.P2P]);
    return a ? PT.keys(a).map(function (k) { return a[k]; }).filter(function (r) { return r && isNum(r[K.SOURCE]) && isNum(r[K.DESTINATION]); }) : [];
  }

  function mb(b) { return isNum(b) ? (b / 1e6).toFixed(b >= 1e8 ? 0 : 1) + ' MB' : '–'; }

  function cell(r, max) {
    var bw = r[K.BANDWIDTH_GB_S], slow = r[K.SLOW] === true;
    var shade = isNum(bw) && max > 0 ? 0.15 + 0.6 * bw / max : 0;
    var td = h('td', { class: 'p2p-cell' + (slow ? ' p2p-slow' : ''), 'data-src': String(r[K.SOURCE]), 'data-dst': String(r[K.DESTINATION]),
      title: 'rank ' + r[K.SOURCE] + ' → rank ' + r[K.DESTINATION] + ': ' + r[K.COUNT] + ' transfers, ' + mb(r[K.BYTES]) + ' in ' +
        ms(r[K.TIME_MS]) + ' (' + (r[K.TIME_FROM] === 'send' ? "the sender's" : "the receiver's") + ' time)',
      text: isNum(bw) ? bw.toPrecision(3) : '–' });
    td.style.background = slow ? 'rgba(207,34,46,' + (0.25 + shade / 2).toFixed(2) + ')' : 'rgba(9,105,218,' + shade.toFixed(2) + ')';
    return td;
  }

  /* The matrix card, null when the report has no pairs. */
  function p2pCard() {
    var rows = rowsOf();
    if (!rows.length) return null;
    var src = [], dst = [], at = {}, max = 0, nslow = 0;
    rows.forEach(function (r) {
      if (src.indexOf(r[K.SOURCE]) < 0) src.push(r[K.SOURCE]);
      if (dst.indexOf(r[K.DESTINATION]) < 0) dst.push(r[K.DESTINATION]);
      at[r[K.SOURCE] + '>' + r[K.DESTINATION]] = r;
      if (isNum(r[K.BANDWIDTH_GB_S])) max = Math.max(max, r[K.BANDWIDTH_GB_S]);
      if (r[K.SLOW] === true) nslow++;
    });
    var byNum = function (a, b) { return a - b; };
    src.sort(byNum);
    dst.sort(byNum);
    var card = h('div', { class: 'chart-card', id: 'p2p' },
      h('div', { class: 'hd' }, h('h3', { text: 'Point to point: bandwidth (GB/s) by source and destination rank' })));
    card.appendChild(h('div', { class: 'note', text: nslow ? nslow + ' of ' + rows.length + ' pairs are slow (red): see the findings.'
      : 'No destination, source or pair is markedly slower than the others.' }));
    var head = h('tr', null, h('th', { text: 'source \\ destination' }));
    dst.forEach(function (d) { head.appendChild(h('th', { text: 'rank ' + d })); });
    var body = h('tbody');
    src.forEach(function (s) {
      var tr = h('tr', null, h('th', { text: 'rank ' + s }));
      dst.forEach(function (d) {
        var r = at[s + '>' + d];
        tr.appendChild(r ? cell(r, max) : h('td', { class: 'p2p-none', text: '' }));
      });
      body.appendChild(tr);
    });
    card.appendChild(h('table', { class: 'p2p-table' }, h('thead', null, head), body));
    return card;
  }

  PT.p2pCard = p2pCard;
}(PT));
