/*
 * names.js - PerfDisplay: short function names for tables and chart axes
 * (C++ names without namespaces, templates and parameters; Python stacks
 * leaf first; duplicates told apart).  Used by model.js (PT.M.short) and
 * widgets.js (shortName).
 */
(function (PT) {
  'use strict';

  /* Short function names (src/report/names.c has the same rules): C++ names
     lose namespaces, template arguments and parameters; stacks read leaf
     first; names that would then read the same get back the word where they
     differ, then their launch shape. */
  var SHAPE = /\d+_\d+_\d+\|\d+_\d+_\d+$/;
  function stripShape(k) { var m = SHAPE.exec(k); return m ? k.slice(0, m.index) : k; }
  function isIdent(c) { return /[A-Za-z0-9_]/.test(c || ''); }
  function shortCxx(s) {
    var out = '', i = 0, n = s.length;
    while (i < n) {
      var c = s[i];
      if (c === ':' && s[i + 1] === ':' && i + 2 < n) { out = ''; i += 2; continue; }
      if (s.substr(i, 21) === '(anonymous namespace)') { i += 21; continue; }
      if (c === '(' && s[i + 1] === ')') { out += '()'; i += 2; continue; }
      if ((c === '<' || c === '(') && i > 0 && (isIdent(s[i - 1]) || s[i - 1] === '>')) {
        if (c === '(') break;
        out += '<…>';
        var d = 0;
        for (; i < n; i++) {
          var ch = s[i];
          if ('<({['.indexOf(ch) >= 0) d++;
          else if ('>)}]'.indexOf(ch) >= 0 && !(ch === '>' && s[i - 1] === '-') && --d === 0) { i++; break; }
        }
        continue;
      }
      out += c; i++;
    }
    return out;
  }
  function shortOne(key) {
    key = String(key);
    var base = stripShape(key);
    if (base === key && isStack(key))
      return key.split('|').reverse().map(function (f) { return f.replace(/^[^:]*\/([^/:]*: )/, '$1'); }).join(' ← ');
    if (base.slice(0, 5) === 'void ') base = base.slice(5);
    var r = /[<(]/.test(base) ? shortCxx(base) : base;
    return r || key;
  }
  /* The word of key k (shape left out) where it leaves its closest neighbour
     in the sorted list g (identifier characters around that offset). */
  function wordAt(k, d) {
    var m = k.length, a = d;
    while (a < m && !isIdent(k[a])) a++;
    if (a === m) a = d;
    while (a > 0 && isIdent(k[a - 1])) a--;
    var b = a; while (b < m && isIdent(k[b])) b++;
    return k.slice(a, b > a ? b : a + 1);
  }
  function splitWords(g) {   // g: distinct strings, sorted; -> word per string
    var lcp = function (a, b) { var j = 0; while (j < a.length && a[j] === b[j]) j++; return j; };
    var w = Object.create(null);
    g.forEach(function (k, i) {
      var d = Math.max(i > 0 ? lcp(g[i - 1], k) : 0, i + 1 < g.length ? lcp(k, g[i + 1]) : 0);
      w[k] = wordAt(k, d);
    });
    return w;
  }
  function groups(list, lab) {
    var by = Object.create(null);
    list.forEach(function (k) { (by[lab[k]] = by[lab[k]] || []).push(k); });
    return Object.keys(by).map(function (x) { return by[x]; }).filter(function (g) { return g.length > 1; });
  }
  function shortNames(list) {
    var out = Object.create(null);
    list.forEach(function (k) { out[k] = shortOne(k); });
    /* 1: the word where the names (launch shapes left out) differ */
    groups(list, out).forEach(function (g) {
      var names = g.map(stripShape).filter(function (x, i, a) { return a.indexOf(x) === i; }).sort();
      if (names.length < 2) return;
      var w = splitWords(names);
      g.forEach(function (k) {
        var s2 = out[k], word = w[stripShape(k)];
        out[k] = s2.indexOf('<…>') >= 0 ? s2.replace('<…>', '<…' + word + '…>') : s2 + ' [' + word + ']';
      });
    });
    /* 2: a further word, or the launch shape when only that differs */
    groups(list, out).forEach(function (g) {
      var names = g.map(stripShape).filter(function (x, i, a) { return a.indexOf(x) === i; }).sort();
      var w = names.length > 1 ? splitWords(names) : null;
      g.forEach(function (k) {
        var sh = k.slice(stripShape(k).length);
        out[k] += ' [' + (w && names.length === g.length ? w[stripShape(k)] : sh || w && w[stripShape(k)] || '') + ']';
      });
    });
    /* 3: still the same: numbered */
    groups(list, out).forEach(function (g) { g.sort().forEach(function (k, i) { out[k] += ' #' + (i + 1); }); });
    return out;
  }

  function isStack(name) {
    var i = name.lastIndexOf('|');
    return i > 0 && !/^\d+_\d+_\d+$/.test(name.slice(i + 1));
  }

  PT.shortOne = shortOne;
  PT.groups = groups;
  PT.shortNames = shortNames;
  PT.isStack = isStack;
}(PT));
