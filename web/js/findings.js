/*
 * findings.js - PerfDisplay: one finding as a card (who, the function,
 * the evidence, the explanation, the confidence, the link to its view) and
 * the merged evidence of the same cause; used by the overview, a worker's
 * page.
 */
(function (PT) {
  'use strict';
  var SECTION = PT.SECTION, fmtUnit = PT.fmtUnit, h = PT.h, isNum = PT.isNum, keyUnit = PT.keyUnit,
    lbl = PT.lbl, ms = PT.ms, obj = PT.obj, plural = PT.plural, fnName = PT.fnName,
    workerLink = PT.workerLink;

  /* The page views a finding may link to: its "view", decided by the
     report (no view, no link). */
  var FINDING_VIEWS = ['workers', 'compute', 'communication', 'memory', 'runtime', 'python', 'hang', 'compare'];
  function findingView(f) {
    var v = f[K.VIEW];
    return typeof v === 'string' && FINDING_VIEWS.indexOf(v) >= 0 ? v : null;
  }
  /* The unit of the finding's metric called name: from its "metrics"
     (the report's typed numbers), else from the keys table for a section
     key; '' (a plain number) when neither says. */
  function metricUnit(f, name) {
    var ms2 = Array.isArray(f[K.METRICS]) ? f[K.METRICS].filter(obj) : [], i;
    for (i = 0; i < ms2.length; i++)
      if (ms2[i][K.NAME] === name && typeof ms2[i][K.UNIT] === 'string') return ms2[i][K.UNIT];
    return name != null ? keyUnit(String(name)) : '';
  }
  /* The finding's other metrics (after the headline), "name value" each. */
  function moreMetrics(f) {
    var ms2 = Array.isArray(f[K.METRICS]) ? f[K.METRICS].filter(obj) : [];
    return ms2.filter(function (x) { return x[K.NAME] !== f[K.METRIC] && x[K.NAME] != null; }).map(function (x) {
      return lbl(x[K.NAME]) + ' ' + fmtUnit(x[K.VALUE], x[K.UNIT]);
    });
  }
  /* The finding's worker labels ("rank N" or the id, from its "labels"),
     parallel to ids; null when the report gives none. */
  function labelsOf(f, ids) {
    var l = f[K.LABELS];
    return Array.isArray(l) && l.length === ids.length ? l.map(String) : null;
  }
  function whoText(ids, labels, grouped) {
    if (!ids.length) return 'All workers';
    if (ids.length === 1) {
      var w = PT.M.byId[ids[0]], host = w && w.host ? ' on ' + w.host : '';
      if (labels) return 'Worker ' + labels[0] + host;
      return w && w.rank != null ? 'Worker rank ' + w.rank + host : 'Worker ' + ids[0];
    }
    /* a cause grouped across workers: worst first (docs/diagnose.md) */
    if (grouped) return ids.length + ' workers, worst first: ' + (labels ? labels[0] : ids[0]) + (ids.length > 1 ? ', …' : '');
    return ids.length + ' workers';
  }

  /* "impact (ms)" is per profiled window (of its first worker: the worst
     of a grouped cause); the sentences say per step */
  function impactPerStep(f, ids) {
    var w = ids.length === 1 || isGrouped(f, ids) ? PT.M.byId[ids[0]] : null, n = w && w.steps > 0 ? w.steps : 0;
    return n ? ms(f[K.IMPACT_MS] / n) + ' per step' : ms(f[K.IMPACT_MS]);
  }
  /* One cause on several workers (docs/diagnose.md "One finding per cause"):
     the evidence names the others as "same cause on another worker". */
  function isGrouped(f, ids) {
    return ids.length > 1 && (Array.isArray(f[K.EVIDENCE]) ? f[K.EVIDENCE] : []).some(function (e) {
      return obj(e) && e[K.KIND] === 'same cause on another worker';
    });
  }
  function findingCard(f, i) {
    var ids = (Array.isArray(f[K.WORKERS]) ? f[K.WORKERS] : []).map(String), labels = labelsOf(f, ids);
    var fn = f[K.FUNCTION] != null ? String(f[K.FUNCTION]) : '';
    var metric = f[K.METRIC], value = f[K.VALUE], others = f[K.OTHERS], unit = metricUnit(f, metric);
    var ratio = isNum(value) && isNum(others) && others > 0 ? value / others : NaN;
    var ev = [];
    if (metric != null || isNum(value)) {
      ev.push((metric ? lbl(metric) + ': ' : '') + fmtUnit(value, unit));
      if (others != null) ev.push(' vs ' + fmtUnit(others, unit) + ' on the other workers' + (isNum(ratio) ? ' (' + ratio.toFixed(ratio < 10 ? 2 : 0) + '×)' : ''));
    }
    moreMetrics(f).forEach(function (t) { ev.push(' · ' + t); });
    var tgt = findingView(f);
    var chips = h('div', { class: 'meta' });
    ids.slice(0, 12).forEach(function (id, k) { chips.appendChild(workerLink(id, 'bad', false, labels && labels[k])); });
    if (ids.length > 12) chips.appendChild(h('span', { class: 'muted', text: 'and ' + (ids.length - 12) + ' more' }));
    var cf = obj(f[K.CONFIDENCE]), lvl = cf && typeof cf[K.LEVEL] === 'string' ? cf[K.LEVEL] : '';
    return h('div', { class: 'finding' + (lvl ? ' conf-' + lvl : ''), 'data-rank': f[K.RANK], 'data-confidence': lvl || null,
      'data-view': tgt },
      h('div', { class: 'rank', text: '#' + (isNum(f[K.RANK]) ? f[K.RANK] : i + 1) }),
      h('div', { class: 'title' }, whoText(ids, labels, isGrouped(f, ids)), fn ? [': ', fnName(fn)] : null),
      ev.length ? h('div', { class: 'evidence', text: ev.join('') }) : null,
      f[K.EXPLANATION] ? h('div', { class: 'expl', text: String(f[K.EXPLANATION]) }) : null,
      cf && cf[K.EVIDENCE] ? h('div', { class: 'confidence-note', text: (lvl ? lvl + ': ' : '') + String(cf[K.EVIDENCE]) }) : null,
      h('div', { class: 'meta' },
        lvl ? h('span', { class: 'badge conf ' + lvl, title: 'how strong this finding is: time lost, how far from the other workers, every call or only some slower', text: lvl }) : null,
        f[K.CATEGORY] ? h('span', { class: 'badge', text: String(f[K.CATEGORY]) }) : null,
        isNum(f[K.IMPACT_MS]) ? h('span', { class: 'badge bad', title: 'time lost, ' + ms(f[K.IMPACT_MS]) + ' over the profiled window', text: 'impact ≈ ' + impactPerStep(f, ids) }) : null,
        tgt ? h('a', { href: '#' + tgt + (ids.length === 1 ? '?q=' + encodeURIComponent(ids[0]) : ''), text: 'see ' + (SECTION[tgt] || tgt) + ' →' }) : null),
      ids.length ? chips : null,
      evidenceList(f));
  }

  /* The other sections' findings of the same cause, the frames inside it,
   * a straggler's own collectives and its victims' symptoms, merged into
   * this finding (docs/diagnose.md "One finding per cause"). */
  function evidenceList(f) {
    var ev = (Array.isArray(f[K.EVIDENCE]) ? f[K.EVIDENCE] : []).filter(obj);
    if (!ev.length) return null;
    return h('details', { class: 'merged-evidence' },
      h('summary', { text: 'Also seen: ' + plural(ev.length, 'finding') + ' of this cause (' +
        ev.map(function (e) { return String(e[K.KIND] || ''); }).filter(function (k, i, a) { return a.indexOf(k) === i; }).join(', ') + ')' }),
      h('ul', null, ev.map(function (e) {
        var w = e[K.WORKER] ? String(e[K.WORKER]) : '';
        return h('li', null, h('span', { class: 'badge', text: String(e[K.KIND] || '') }), ' ',
          w ? workerLink(w) : null, w ? ' ' : null,
          h('span', { text: (e[K.CATEGORY] ? String(e[K.CATEGORY]) + ': ' : '') + String(e[K.EXPLANATION] || e[K.FUNCTION] || '') }));
      })));
  }

  function isWeak(f) {
    var cf = obj(f[K.CONFIDENCE]);
    return !!(cf && cf[K.LEVEL] === 'weak');
  }

  /* Does the job run GPU kernels?  Without any, GPU charts are empty. */
  function hasGpu() {
    return PT.M.workers.some(function (w) { return isNum(w.util) && w.util > 0; });
  }

  PT.findingCard = findingCard;
  PT.isWeak = isWeak;
  PT.hasGpu = hasGpu;
}(PT));
