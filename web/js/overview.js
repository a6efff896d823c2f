/*
 * overview.js - PerfDisplay: the Overview view (the verdict, the ranked
 * findings, the headline numbers, the utilization and step charts) and the
 * lockstep card: who waited for whom at the collectives.
 */
(function (PT) {
  'use strict';
  var add = PT.add, h = PT.h, isNum = PT.isNum, keys = PT.keys, ms = PT.ms, obj = PT.obj, pct = PT.pct,
    plural = PT.plural, legend = PT.legend, stat = PT.stat, table = PT.table, workerLabel = PT.workerLabel,
    workerLink = PT.workerLink, findingCard = PT.findingCard, hasGpu = PT.hasGpu, isWeak = PT.isWeak,
    stepChart = PT.stepChart, utilChart = PT.utilChart;

  /* ---- lockstep (report "Lockstep", docs/diagnose.md) ---------------------
   * In a synchronous job the worker with the longest step is usually the
   * one that waits most, a victim; the one the others wait for is the
   * straggler.  These helpers keep the overview from calling the longest
   * waiter "slowest". */
  function lockstepOf() {
    var l = obj(PT.M.rep[K.LOCKSTEP]);
    if (!l || !obj(l[K.WORKERS])) return null;
    var byId = {};
    PT.M.workers.forEach(function (w) { byId[w.id] = w; });
    var rows = keys(l[K.WORKERS]).map(function (id) {
      var r = obj(l[K.WORKERS][id]) || {};
      return { id: id, w: byId[id] || null, rank: isNum(r[K.RANK]) ? r[K.RANK] : null,
        waited: r[K.WAITED_FOR_OTHERS_MS], blamed: r[K.OTHERS_WAITED_FOR_IT_MS],
        last: r[K.LAST_ARRIVALS], straggler: r[K.STRAGGLER] === true, mismatch: r[K.MISMATCH] || null,
        own: r[K.OWN_STEP_MS] };
    });
    rows.sort(function (a, b) { return (b.blamed || 0) - (a.blamed || 0) || (b.waited || 0) - (a.waited || 0) || (a.id < b.id ? -1 : 1); });
    var strag = (Array.isArray(l[K.STRAGGLERS]) ? l[K.STRAGGLERS] : []).map(obj).filter(Boolean);
    return { l: l, rows: rows, stragglers: strag };
  }

  function lockName(r) { return r.rank != null && r.rank >= 0 ? 'rank ' + r.rank : r.id; }

  function stepStatNote() {
    var L = lockstepOf();
    if (L && L.stragglers.length) {
      var s = L.stragglers[0];
      return 'others waited for: ' + (isNum(s[K.RANK]) && s[K.RANK] >= 0 ? 'rank ' + s[K.RANK] : String(s[K.WORKER])) +
        ' (' + ms(s[K.OTHERS_WAITED_FOR_IT_MS]) + ' in all)';
    }
    var longest = PT.M.workers.filter(function (w) { return isNum(w.step); }).sort(function (a, b) { return b.step - a.step; })[0];
    if (!longest) return null;
    /* the longest step may be the longest wait: say so when lockstep data shows it */
    return 'longest: ' + workerLabel(longest) + ', ' + ms(longest.step) + (L ? ' (waiting included)' : '');
  }

  function lockBar(v, max, color) {
    var wpx = isNum(v) && max > 0 ? Math.max(0, Math.round(160 * v / max)) : 0;
    return h('span', { class: 'lock-bar-wrap', style: 'display:inline-flex;align-items:center;gap:6px' },
      h('span', { class: 'lock-bar', style: 'display:inline-block;height:10px;width:' + wpx + 'px;background:' + color }),
      h('span', { text: isNum(v) ? ms(v) : '–' }));
  }

  function lockstepCard() {
    var L = lockstepOf();
    if (!L) return null;
    var max = 0;
    L.rows.forEach(function (r) { max = Math.max(max, isNum(r.waited) ? r.waited : 0, isNum(r.blamed) ? r.blamed : 0); });
    var card = h('div', { class: 'chart-card', id: 'lockstep' },
      h('div', { class: 'hd' }, h('h3', { text: 'Who waited for whom (collectives)' })));
    card.appendChild(legend([['#cf222e', 'others waited for it (blame)'], ['#9cc3e6', 'waited for others (victim)']]));
    if (L.stragglers.length) {
      var s = L.stragglers[0], wi = obj(s[K.WHAT_IF]) || {};
      card.appendChild(h('div', { class: 'note lock-summary', text: (isNum(s[K.RANK]) && s[K.RANK] >= 0 ? 'rank ' + s[K.RANK] : String(s[K.WORKER])) +
        ' is the worker the others waited for: ' + ms(s[K.OTHERS_WAITED_FOR_IT_MS]) + ' in all, last at ' + s[K.LAST_ARRIVALS] +
        ' collectives. Fixing it is worth ' + ms(wi[K.SAVED_MS]) + ' per step (' + (isNum(wi[K.SAVED_PCT]) ? wi[K.SAVED_PCT].toFixed(1) : '–') + '%).' +
        (s[K.PREDATES_WINDOW] ? ' Its lateness predates the profiled window: profile more steps (--steps 2).' : '') }));
    } else {
      card.appendChild(h('div', { class: 'note lock-summary', text: 'No worker makes the others wait beyond the thresholds.' }));
    }
    var tb = h('table', { class: 'lock-table' },
      h('thead', null, h('tr', null, h('th', { text: 'worker' }), h('th', { text: 'others waited for it' }),
        h('th', { text: 'waited for others' }), h('th', { text: 'last arrivals' }), h('th', { text: 'own step' }))));
    var body = h('tbody');
    L.rows.forEach(function (r) {
      var name = h('span', null, workerLink(r.id, r.straggler ? 'bad' : null), ' ', h('span', { class: 'muted', text: '(' + lockName(r) + ')' }),
        r.straggler ? h('span', { class: 'badge bad lock-straggler', text: 'straggler' }) : null,
        r.mismatch ? h('span', { class: 'badge', text: 'collectives do not match' }) : null);
      body.appendChild(h('tr', { class: r.straggler ? 'hl' : null, 'data-worker': r.id },
        h('td', null, name), h('td', null, lockBar(r.blamed, max, '#cf222e')), h('td', null, lockBar(r.waited, max, '#9cc3e6')),
        h('td', { text: r.last != null ? String(r.last) : '–' }), h('td', { text: isNum(r.own) ? ms(r.own) : '–' })));
    });
    tb.appendChild(body);
    card.appendChild(tb);
    return card;
  }

  /* How many workers the report marks slow, and its threshold; an older
     report marks none and says so. */
  function slowStat() {
    var M = PT.M, n = M.workers.filter(function (w) { return w.slowStep; }).length;
    if (!M.slowJudged) return stat('Slow-step outliers', '–', 'this report does not mark slow workers');
    return stat('Slow-step outliers', String(n), M.stepLimit != null ? 'limit ' + ms(M.stepLimit) : 'too few workers to judge');
  }

  function viewOverview(root) {
    var n = PT.M.workers.length;
    add(root, h('h1', { text: 'What slows this job down' }));
    if (PT.M.hang && PT.M.hang[K.HUNG]) {
      add(root, h('div', { class: 'banner bad', id: 'hang-banner' }, h('b', { text: 'The job is hung. ' }),
        PT.M.hang[K.EXPLANATION] ? String(PT.M.hang[K.EXPLANATION]) + ' ' : '', h('a', { href: '#hang', text: 'See the hang section →' })));
    }
    var causes = PT.M.findings.filter(function (f) { return !isWeak(f); });
    var weak = PT.M.findings.filter(isWeak);
    if (causes.length) {
      add(root, h('div', { class: 'banner warn' }, h('b', { text: plural(causes.length, 'finding') + ', ranked by time lost. ' }),
        'Each names the workers and the function to blame and compares them with the other workers.'));
    } else if (weak.length) {
      add(root, h('div', { class: 'banner ok' }, h('b', { text: 'Nothing beyond the job\'s own noise. ' }),
        plural(weak.length, 'finding') + ' may be noise: see the group below.'));
    } else {
      add(root, h('div', { class: 'banner ok' }, h('b', { text: 'No anomaly found. ' }),
        'No worker differs from the others by more than the thresholds; the sections below list where the time goes.'));
    }
    var u = (obj(PT.M.rep[K.GPU_COMPUTE]) || {})[K.MIN_MEDIAN_MAX_GPU_UTIL];
    add(root, h('div', { class: 'stats' },
      stat('Workers', String(n), PT.M.errors.length ? plural(PT.M.errors.length, 'trace') + ' could not be read' : 'all traces read'),
      hasGpu() ? stat('GPU utilization (median)', Array.isArray(u) ? pct(u[1], 1) : pct(PT.M.utilMedian, 1), Array.isArray(u) ? 'min ' + pct(u[0], 1) + ' · max ' + pct(u[2], 1) : null)
        : stat('GPU', 'none', 'no GPU kernel in the traces'),
      stat(PT.M.stepExact ? 'Step time (median)' : 'Mean step time (median)', ms(PT.M.stepMedian), stepStatNote()),
      slowStat()));
    var list = h('div', { id: 'findings' });
    causes.forEach(function (f, i) { list.appendChild(findingCard(f, i)); });
    if (weak.length) {
      var grp = h('details', { class: 'noise-group', id: 'possibly-noise' },
        h('summary', { text: 'Possibly noise: ' + plural(weak.length, 'finding') + ' within the job\'s own noise (the spread between workers doing the same work, CPU contention, step-to-step spread)' }));
      weak.forEach(function (f, i) { grp.appendChild(findingCard(f, causes.length + i)); });
      list.appendChild(grp);
    }
    add(root, list);
    add(root, h('div', { class: 'grid2' }, hasGpu() ? utilChart() : null, stepChart()));
    var lock = lockstepCard();
    if (lock) add(root, lock);
    if (PT.M.errors.length) {
      add(root, h('h2', { text: 'Traces that could not be read' }));
      add(root, table({ title: 'Unreadable traces', rows: PT.M.errors, sort: ['id', 1], cols: [
        { key: 'id', label: 'worker', fmt: function (v) { return workerLink(v); } },
        { key: 'error', label: 'error' }] }));
    }
  }

  PT.viewOverview = viewOverview;
}(PT));
