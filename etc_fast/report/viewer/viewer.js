/* etc_fast run viewer: plain JavaScript, no network, no HTML from data.
 *
 * Everything the page shows comes from the inert JSON element #viewer-data and, for one trial,
 * from its deflated transcript element (decompressed on demand with DecompressionStream). Text
 * from the data (model replies, laws, judge reasons) is only ever inserted with textContent or as
 * text nodes; attributes set from data never include URLs. The view and its filters live in the
 * URL hash, so a filtered table or an opened trial can be bookmarked and shared with the file.
 */
(function () {
  'use strict';

  var DATA = JSON.parse(document.getElementById('viewer-data').textContent);
  var app = document.getElementById('app');
  var SVGNS = 'http://www.w3.org/2000/svg';
  var RUNS = DATA.runs;
  var MULTI = RUNS.length > 1;

  // ------------------------------------------------------------------------------------
  // DOM helpers (text only)
  // ------------------------------------------------------------------------------------
  function add(e, kids) {
    for (var i = 0; i < kids.length; i++) {
      var k = kids[i];
      if (k === null || k === undefined || k === false) continue;
      if (Array.isArray(k)) { add(e, k); continue; }
      e.appendChild(typeof k === 'object' ? k : document.createTextNode(String(k)));
    }
    return e;
  }
  function setAttrs(e, attrs) {
    if (!attrs) return e;
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === 'class') e.setAttribute('class', v);
      else if (k === 'text') e.textContent = String(v);
      else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    });
    return e;
  }
  function el(tag, attrs) {
    return add(setAttrs(document.createElement(tag), attrs), Array.prototype.slice.call(arguments, 2));
  }
  function sv(tag, attrs) {
    return add(setAttrs(document.createElementNS(SVGNS, tag), attrs), Array.prototype.slice.call(arguments, 2));
  }
  function pre(text, cls) { return el('pre', cls ? { 'class': cls } : null, text === null || text === undefined ? '' : String(text)); }

  // ------------------------------------------------------------------------------------
  // Values
  // ------------------------------------------------------------------------------------
  function num(v) {
    if (v === null || v === undefined) return null;
    if (typeof v === 'number') return v;
    if (typeof v === 'string') return Number(v);  // "NaN", "Infinity", "-Infinity"
    return null;
  }
  function fmtNum(v) {
    if (v === null || v === undefined) return '\u2013';
    if (Number.isNaN(v)) return 'nan';
    if (v === Infinity) return 'inf';
    if (v === -Infinity) return '-inf';
    if (Number.isInteger(v) && Math.abs(v) < 1e15) return String(v);
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
    return String(Number(v.toPrecision(4)));
  }
  function fmt(v, kind) {
    if (v === null || v === undefined) return '\u2013';
    if (kind === 'num') return fmtNum(num(v));
    if (kind === 'bool') return v ? 'yes' : 'no';
    return String(v);
  }
  function cellText(v) {
    if (v === null || v === undefined) return '';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    return String(v);
  }

  // ------------------------------------------------------------------------------------
  // Trials of every run, keyed by column name
  // ------------------------------------------------------------------------------------
  var ALL = [];
  var COLUMNS = [];  // [{name, kind}] union over runs, in order
  (function () {
    var seen = {};
    if (MULTI) { COLUMNS.push({ name: 'run', kind: 'str' }); seen.run = true; }
    RUNS.forEach(function (run, r) {
      var cols = run.trials.columns;
      cols.forEach(function (c) { if (!seen[c.name]) { seen[c.name] = true; COLUMNS.push(c); } });
      run.trials.rows.forEach(function (row, i) {
        var c = {};
        cols.forEach(function (col, j) { c[col.name] = col.kind === 'num' ? num(row[j]) : row[j]; });
        if (MULTI) c.run = run.name;
        ALL.push({
          r: r, i: i, id: c.trial_id, c: c, tx: run.transcript[i], sha: run.sha256[i],
          final: run.final_source[i] || '', origin: run.submission_origin[i] || '',
          search: null, record: null, raw: null
        });
      });
    });
  })();
  var KIND = {};
  COLUMNS.forEach(function (c) { KIND[c.name] = c.kind; });
  function trialKey(t) { return t.r + ':' + t.id; }
  function findTrial(r, id) {
    for (var i = 0; i < ALL.length; i++) if (ALL[i].r === r && ALL[i].id === id) return ALL[i];
    return null;
  }
  function searchText(t) {
    if (t.search === null) {
      var parts = [t.final];
      COLUMNS.forEach(function (c) { if (c.kind === 'str' && t.c[c.name] !== null && t.c[c.name] !== undefined) parts.push(String(t.c[c.name])); });
      t.search = parts.join('\n').toLowerCase();
    }
    return t.search;
  }
  // categorical columns: strings and booleans with few distinct values
  var CATEGORIES = [];
  var NUMERIC = [];
  COLUMNS.forEach(function (c) {
    if (c.kind === 'num') {
      if (ALL.some(function (t) { return t.c[c.name] !== null && t.c[c.name] !== undefined; })) NUMERIC.push(c.name);
      return;
    }
    // identifiers and free text (judge reasons, errors) are searched, not listed
    if (/_id$/.test(c.name)) return;
    var values = {};
    var n = 0, long = false;
    ALL.forEach(function (t) {
      var v = cellText(t.c[c.name]);
      if (v.length > 48) long = true;
      if (!(v in values)) { values[v] = true; n++; }
    });
    if (n <= 60 && !long) CATEGORIES.push({ name: c.name, values: Object.keys(values).sort() });
  });

  // ------------------------------------------------------------------------------------
  // State in the URL hash
  // ------------------------------------------------------------------------------------
  function readState() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ''));
    var s = { view: p.get('view') || (DATA.mode === 'compare' ? 'compare' : 'study'), cat: {}, rng: {}, q: p.get('q') || '',
              sort: p.get('sort') || '', run: p.get('run'), id: p.get('id'), ev: p.get('ev'),
              a: p.get('a'), b: p.get('b'), pair: p.get('pair'), show: p.get('show') };
    p.forEach(function (v, k) {
      if (k.slice(0, 2) === 'c.') s.cat[k.slice(2)] = v;
      else if (k.slice(0, 2) === 'n.') {
        var m = v.split(':');
        s.rng[k.slice(2)] = [m[0] === '' ? null : Number(m[0]), m.length > 1 && m[1] !== '' ? Number(m[1]) : null];
      }
    });
    return s;
  }
  function writeState(s) {
    var p = new URLSearchParams();
    p.set('view', s.view);
    Object.keys(s.cat).sort().forEach(function (k) { if (s.cat[k] !== '') p.set('c.' + k, s.cat[k]); });
    Object.keys(s.rng).sort().forEach(function (k) {
      var r = s.rng[k];
      if (r && (r[0] !== null || r[1] !== null)) p.set('n.' + k, (r[0] === null ? '' : r[0]) + ':' + (r[1] === null ? '' : r[1]));
    });
    if (s.q) p.set('q', s.q);
    if (s.sort) p.set('sort', s.sort);
    ['run', 'id', 'ev', 'a', 'b', 'pair', 'show'].forEach(function (k) { if (s[k] !== null && s[k] !== undefined && s[k] !== '') p.set(k, s[k]); });
    return '#' + p.toString();
  }
  function go(s) { location.hash = writeState(s); }
  function replace(s) { history.replaceState(null, '', writeState(s)); }
  function filterOnly(s) { return { view: s.view, cat: s.cat, rng: s.rng, q: s.q, sort: s.sort }; }

  // the filter value of an empty cell (a null budget = uncapped, an empty string): '' means "all"
  var EMPTY = '(empty)';
  function filterValue(v) { var t = cellText(v); return t === '' ? EMPTY : t; }
  function matches(t, s) {
    var ok = true;
    Object.keys(s.cat).forEach(function (k) { if (ok && filterValue(t.c[k]) !== s.cat[k]) ok = false; });
    if (!ok) return false;
    Object.keys(s.rng).forEach(function (k) {
      if (!ok) return;
      var r = s.rng[k];
      if (r[0] === null && r[1] === null) return;
      var v = t.c[k];
      if (v === null || v === undefined || Number.isNaN(v)) { ok = false; return; }
      if (r[0] !== null && !(v >= r[0])) ok = false;
      if (r[1] !== null && !(v <= r[1])) ok = false;
    });
    if (!ok) return false;
    if (s.q) {
      var words = s.q.toLowerCase().split(/\s+/).filter(Boolean);
      var text = searchText(t);
      for (var i = 0; i < words.length; i++) if (text.indexOf(words[i]) < 0) return false;
    }
    return true;
  }
  function compareValues(a, b, kind) {
    // null (and NaN) last, whatever the direction: handled by the caller
    if (kind === 'num') return a - b;
    if (kind === 'bool') return (a ? 1 : 0) - (b ? 1 : 0);
    return String(a) < String(b) ? -1 : (String(a) > String(b) ? 1 : 0);
  }
  function missing(v) { return v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v)); }
  function filtered(s) {
    var list = ALL.filter(function (t) { return matches(t, s); });
    if (s.sort) {
      var desc = s.sort.charAt(0) === '-';
      var col = desc ? s.sort.slice(1) : s.sort;
      var kind = col === 'final law' ? 'str' : KIND[col];
      var get = col === 'final law' ? function (t) { return t.final; } : function (t) { return t.c[col]; };
      list = list.map(function (t, k) { return [t, k]; });
      list.sort(function (x, y) {
        var a = get(x[0]), b = get(y[0]);
        var ma = missing(a), mb = missing(b);
        if (ma || mb) return ma && mb ? x[1] - y[1] : (ma ? 1 : -1);
        var c = compareValues(a, b, kind);
        if (c === 0) return x[1] - y[1];
        return desc ? -c : c;
      });
      list = list.map(function (p) { return p[0]; });
    }
    return list;
  }

  // ------------------------------------------------------------------------------------
  // Transcripts: base64 -> inflate (DecompressionStream) -> JSON
  // ------------------------------------------------------------------------------------
  function loadRecord(t) {
    if (t.record) return Promise.resolve(t.record);
    if (!t.tx && t.sha) return Promise.reject(new Error('its transcript is not in this page (a page embeds ' + fmtNum(RUNS[t.r].embed_limit_mib) +
      ' MiB of transcripts per run, and ' + RUNS[t.r].transcripts_left_out + ' trials of this run come after that): read transcripts/' + t.id +
      '.json in the run directory'));
    if (!t.tx) return Promise.reject(new Error('no transcript is stored for this trial'));
    var node = document.getElementById(t.tx);
    var bin = atob(node.textContent.trim());
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
    return new Response(stream).text().then(function (text) {
      t.raw = text;
      t.record = JSON.parse(text);
      return t.record;
    });
  }

  // ------------------------------------------------------------------------------------
  // Generic table
  // ------------------------------------------------------------------------------------
  function dataTable(columns, rows, opts) {
    opts = opts || {};
    var thead = el('thead', null, el('tr', null, columns.map(function (c) { return el('th', null, c.name); })));
    var tbody = el('tbody');
    rows.forEach(function (row, i) {
      var tr = el('tr');
      columns.forEach(function (c, j) {
        var v = row[j];
        if (opts.cell) { var custom = opts.cell(c, v, i); if (custom) { tr.appendChild(custom); return; } }
        tr.appendChild(el('td', c.kind === 'num' ? { 'class': 'num' } : null, fmt(v, c.kind)));
      });
      tbody.appendChild(tr);
    });
    return el('div', { 'class': 'scroll' }, el('table', { 'class': 'data' + (opts.cls ? ' ' + opts.cls : '') }, thead, tbody));
  }

  // A <details> whose body is built when it is first opened (at once when ``open``): a closed one
  // costs the page nothing, however many rows it holds.
  function lazyDetails(cls, open, summaryKids, build) {
    var d = el('details', { 'class': cls, open: open }, el('summary', null, summaryKids));
    var built = false;
    function fill() { if (!built && d.open) { built = true; add(d, [build()]); } }
    if (open) fill();
    d.addEventListener('toggle', fill);
    return d;
  }

  // ------------------------------------------------------------------------------------
  // Study view
  // ------------------------------------------------------------------------------------
  function heatColor(v) {
    // 0 -> light red, 100 -> green (viridis would need a table; two hues read well)
    var x = Math.max(0, Math.min(100, v)) / 100;
    var h = Math.round(x * 120);
    return 'hsl(' + h + ', 60%, ' + Math.round(88 - 30 * x) + '%)';
  }
  function heatmap(run, r, table) {
    var keys = run.condition_keys || [];
    var names = table.columns.map(function (c) { return c.name; });
    // rows: every text column that is not a condition (task, and any other a newer report adds);
    // cells: the numeric columns, one per configuration
    var labels = table.columns.filter(function (c) { return keys.indexOf(c.name) < 0 && c.kind !== 'num'; }).map(function (c) { return c.name; });
    if (labels.indexOf('task') < 0) return null;
    var cfgs = table.columns.filter(function (c) { return keys.indexOf(c.name) < 0 && c.kind === 'num'; });
    var groups = {};
    var order = [];
    table.rows.forEach(function (row) {
      var cond = keys.map(function (k) { return row[names.indexOf(k)]; });
      var key = JSON.stringify(cond);
      if (!(key in groups)) { groups[key] = { cond: cond, rows: [] }; order.push(key); }
      groups[key].rows.push(row);
    });
    var box = el('div', { 'class': 'heat', id: 'heatmap-' + r });
    function heatTable(g) {
      var thead = el('thead', null, el('tr', null, labels.map(function (n) { return el('th', null, n); }), cfgs.map(function (c) { return el('th', null, c.name); })));
      var tbody = el('tbody');
      g.rows.forEach(function (row) {
        var task = row[names.indexOf('task')];
        tbody.appendChild(el('tr', null, labels.map(function (n) { return el('th', null, cellText(row[names.indexOf(n)])); }), cfgs.map(function (c) {
          var v = num(row[names.indexOf(c.name)]);
          if (v === null || Number.isNaN(v)) return el('td', { 'class': 'num muted' }, '\u2013');
          var td = el('td', {
            'class': 'heat-cell', 'data-task': task, 'data-configuration': c.name, title: 'show these trials',
            onclick: function () {
              var cat = { configuration: c.name };
              labels.forEach(function (n) { if (n in KIND) cat[n] = filterValue(row[names.indexOf(n)]); });
              keys.forEach(function (k, j) { cat[k] = filterValue(g.cond[j]); });
              if (MULTI) cat.run = run.name;
              go({ view: 'trials', cat: cat, rng: {}, q: '', sort: '' });
            }
          }, fmtNum(Math.round(v)));
          td.style.backgroundColor = heatColor(v);
          return td;
        })));
      });
      return el('div', { 'class': 'scroll' }, el('table', { 'class': 'data' }, thead, tbody));
    }
    order.forEach(function (key) {
      var g = groups[key];
      var label = keys.map(function (k, j) { return condText(k, g.cond[j]); }).join(' / ');
      // a few conditions are shown open; a study of many (noise x budget x tier) lists them, one click each
      box.appendChild(lazyDetails('heat-group', order.length <= HEAT_OPEN,
        [el('h3', null, 'SA (%) by module and configuration' + (label ? ': ' + label : '')),
          el('span', { 'class': 'muted' }, ' (' + g.rows.length + ' task' + (g.rows.length === 1 ? '' : 's') + ')')],
        function () {
          return [el('p', { 'class': 'caption' }, 'Click a cell to list its trials.'), heatTable(g)];
        }));
    });
    return box;
  }
  // heatmaps (conditions) shown open; past this many, each opens on a click
  var HEAT_OPEN = 4;
  function condText(k, v) {
    if (k === 'measurement_budget') return v === null || v === undefined ? 'uncapped' : 'budget ' + fmtNum(num(v));
    return k + ' ' + fmt(v, KIND[k] || (typeof v === 'number' ? 'num' : 'str'));
  }

  // Budget curves: SA against the measurement budget (log2 axis) with the 95% interval as a band,
  // one panel per (model,) system and noise, drawn from report/table_budget_curve; the uncapped
  // point (null budget) one doubling right of the largest budget. Only when some trial had a budget.
  var PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939'];
  function tableRows(t) {
    var names = t.columns.map(function (c) { return c.name; });
    return t.rows.map(function (row) { var o = {}; names.forEach(function (n, j) { o[n] = row[j]; }); return o; });
  }
  function f3(v) { return num(v).toFixed(3); }
  function ciText(v, lo, hi) {
    return f3(v) + (lo === null || hi === null ? '' : ' [' + f3(lo) + ', ' + f3(hi) + ']');
  }
  function round3(v) { return v === null || v === undefined ? null : Math.round(num(v) * 1000) / 1000; }
  function budgetPanel(rows, cfgs, budgets, title, k) {
    var W = 470, H = 300, L = 46, R = 12, T = 12, B = 38;
    var hasFree = rows.some(function (o) { return o.measurement_budget === null; });
    var lx = budgets.map(function (b) { return Math.log2(b); });
    var freeX = Math.log2(2 * budgets[budgets.length - 1]);
    var x0 = lx[0] - 0.35, x1 = (hasFree ? freeX : lx[lx.length - 1]) + 0.35;
    function X(b) { return L + (W - L - R) * ((b === null ? freeX : Math.log2(b)) - x0) / (x1 - x0); }
    function Y(v) { return T + (H - T - B) * (1 - num(v)); }
    var svgEl = sv('svg', { 'class': 'plot budget-plot', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'data-panel': title, role: 'img', 'aria-label': 'SA against measurement budget: ' + title });
    [0, 0.25, 0.5, 0.75, 1].forEach(function (v) {
      svgEl.appendChild(sv('line', { 'class': 'grid', x1: L, x2: W - R, y1: Y(v), y2: Y(v) }));
      svgEl.appendChild(sv('text', { x: L - 6, y: Y(v) + 3, 'text-anchor': 'end' }, String(v)));
    });
    budgets.concat(hasFree ? [null] : []).forEach(function (b) {
      svgEl.appendChild(sv('line', { 'class': 'grid', x1: X(b), x2: X(b), y1: T, y2: H - B }));
      svgEl.appendChild(sv('text', { x: X(b), y: H - B + 13, 'text-anchor': 'middle' }, b === null ? 'none' : String(b)));
    });
    svgEl.appendChild(sv('line', { 'class': 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }));
    svgEl.appendChild(sv('line', { 'class': 'axis', x1: L, x2: L, y1: T, y2: H - B }));
    svgEl.appendChild(sv('text', { x: (L + W - R) / 2, y: H - 6, 'text-anchor': 'middle' }, 'measurement budget (log2; none = uncapped)'));
    svgEl.appendChild(sv('text', { x: 12, y: (T + H - B) / 2, 'text-anchor': 'middle', transform: 'rotate(-90 12 ' + ((T + H - B) / 2) + ')' }, 'SA (share credited)'));
    cfgs.forEach(function (cfg, j) {
      var color = PALETTE[j % PALETTE.length];
      var mine = rows.filter(function (o) { return o.configuration === cfg; });
      var capped = mine.filter(function (o) { return o.measurement_budget !== null; }).sort(function (a, b) { return num(a.measurement_budget) - num(b.measurement_budget); });
      var band = capped.filter(function (o) { return o.sa_ci_low !== null && o.sa_ci_high !== null; });
      if (band.length > 1) {
        var pts = band.map(function (o) { return X(num(o.measurement_budget)) + ',' + Y(o.sa_ci_high); })
          .concat(band.slice().reverse().map(function (o) { return X(num(o.measurement_budget)) + ',' + Y(o.sa_ci_low); }));
        svgEl.appendChild(sv('polygon', { 'class': 'band', points: pts.join(' '), fill: color, 'fill-opacity': 0.14, 'data-configuration': cfg }));
      }
      if (capped.length) {
        svgEl.appendChild(sv('polyline', { 'class': 'curve', fill: 'none', stroke: color, 'stroke-width': 1.6, 'data-configuration': cfg, 'data-points': String(capped.length),
          points: capped.map(function (o) { return X(num(o.measurement_budget)) + ',' + Y(o.sa); }).join(' ') }));
      }
      mine.forEach(function (o) {
        var b = o.measurement_budget === null ? null : num(o.measurement_budget);
        if (o.sa_ci_low !== null && o.sa_ci_high !== null) svgEl.appendChild(sv('line', { stroke: color, 'stroke-width': 1, x1: X(b), x2: X(b), y1: Y(o.sa_ci_low), y2: Y(o.sa_ci_high) }));
        svgEl.appendChild(sv('circle', { 'class': 'pt', cx: X(b), cy: Y(o.sa), r: 3.2, fill: color, 'data-configuration': cfg, 'data-budget': b === null ? 'none' : String(b), 'data-sa': String(round3(o.sa)) },
          sv('title', null, cfg + ' @' + (b === null ? 'uncapped' : b) + ': SA ' + ciText(o.sa, o.sa_ci_low, o.sa_ci_high) + ' (' + o.credited + '/' + o.n + ')')));
      });
    });
    var legend = el('p', { 'class': 'legend' }, cfgs.map(function (cfg, j) {
      var sw = el('span', { 'class': 'swatch' }, '\u25A0 ');
      sw.style.color = PALETTE[j % PALETTE.length];
      return el('span', null, sw, cfg);
    }));
    // the curve as a table: one row per configuration, one column per budget, "SA [low, high]"
    var cols = budgets.concat(hasFree ? [null] : []);
    var thead = el('thead', null, el('tr', null, el('th', null, 'configuration'), cols.map(function (b) { return el('th', null, b === null ? 'uncapped' : '@' + b); })));
    var tbody = el('tbody', null, cfgs.map(function (cfg) {
      return el('tr', { 'data-configuration': cfg }, el('th', null, cfg), cols.map(function (b) {
        var o = rows.filter(function (r) { return r.configuration === cfg && (r.measurement_budget === null ? b === null : num(r.measurement_budget) === b); })[0];
        return el('td', { 'class': 'num', 'data-budget': b === null ? 'none' : String(b) }, o ? ciText(o.sa, o.sa_ci_low, o.sa_ci_high) : '\u2013');
      }));
    }));
    return el('div', { 'class': 'budget-panel', id: 'budget-panel-' + k },
      el('h3', null, 'SA against the measurement budget: ' + title), svgEl, legend,
      el('div', { 'class': 'scroll' }, el('table', { 'class': 'data budget-table' }, thead, tbody)));
  }
  function budgetCurves(run, r) {
    var curve = run.tables.filter(function (t) { return t.stem === 'table_budget_curve'; })[0];
    if (!curve) return null;
    var rows = tableRows(curve);
    var budgets = [];
    rows.forEach(function (o) { var b = o.measurement_budget; if (b !== null && b !== undefined && budgets.indexOf(num(b)) < 0) budgets.push(num(b)); });
    if (!budgets.length) return null;
    budgets.sort(function (a, b) { return a - b; });
    var cfgs = [];
    rows.forEach(function (o) { if (cfgs.indexOf(o.configuration) < 0) cfgs.push(o.configuration); });
    var keys = ('model' in (rows[0] || {}) ? ['model'] : []).concat(['system', 'noise']);
    var panels = {}, order = [];
    rows.forEach(function (o) {
      var key = JSON.stringify(keys.map(function (k) { return o[k]; }));
      if (!(key in panels)) { panels[key] = []; order.push(key); }
      panels[key].push(o);
    });
    var box = el('section', { 'class': 'budget-curves', id: 'budget-curves-' + r });
    box.appendChild(el('h2', null, 'Budget curves'));
    box.appendChild(el('p', { 'class': 'caption' }, 'SA (share of trials credited) at each measurement budget, with its 95% interval (cluster bootstrap over ' + (run.cluster || 'modules') + '; ' +
      'table_budget_curve). Each cell of the tables reads SA [low, high]. Paired comparisons at each budget: table_paired, next; the budget each configuration needs for an SA: table_budget_to_sa, under Tables.'));
    order.forEach(function (key, k) {
      var cond = JSON.parse(key);
      var title = keys.map(function (kk, j) { return kk === 'noise' ? 'noise ' + fmtNum(num(cond[j])) : String(cond[j]); }).join(' / ');
      box.appendChild(budgetPanel(panels[key], cfgs.filter(function (c) { return panels[key].some(function (o) { return o.configuration === c; }); }), budgets, title, r + '-' + k));
    });
    return box;
  }
  // report tables longer than this show their rows on a click (every row, built then)
  var TABLE_OPEN_ROWS = 60;
  function reportTable(t, open) {
    var n = t.rows.length;
    var body = !n ? el('p', { 'class': 'muted' }, '(no rows)') : open || n <= TABLE_OPEN_ROWS ? dataTable(t.columns, t.rows)
      : lazyDetails('table-rows', false, n + ' rows', function () { return dataTable(t.columns, t.rows); });
    return el('section', { 'class': 'report-table', 'data-stem': t.stem, 'data-rows': n }, el('h3', null, t.title),
      t.caption ? el('p', { 'class': 'caption' }, t.caption) : null, body);
  }
  function viewStudy() {
    var out = [];
    RUNS.forEach(function (run, r) {
      out.push(el('h2', null, 'Run ' + run.name));
      out.push(el('p', null, run.n_trials + ' trials (' + run.n_failed + ' failed); models: ' + (run.models.join(', ') || '\u2013') +
        '; judge: ', el('strong', { id: r === 0 ? 'judge-name' : null }, run.judge),
        '. SA = share of trials credited by that judge; RMSLE = NewtonBench magnitude RMSLE on the shared grid.'));
      if (run.transcripts_left_out) out.push(el('p', { 'class': 'muted', id: 'left-out-' + r }, 'This page embeds the first ' +
        fmtNum(run.embed_limit_mib) + ' MiB of transcripts; the ' + run.transcripts_left_out + ' trials after them keep their row and final law, ' +
        'and their transcripts are in the run directory (transcripts/TRIAL_ID.json).'));
      // an equal-budget study is read first by its curves and the paired comparisons at each budget
      var curves = budgetCurves(run, r);
      var paired = curves ? run.tables.filter(function (t) { return t.stem === 'table_paired'; })[0] : null;
      out.push(curves);
      if (paired) out.push(reportTable(paired, true));  // the answer of such a study: every row shown
      var heat = run.tables.filter(function (t) { return t.stem === 'table_heatmap'; })[0];
      if (heat) out.push(heatmap(run, r, heat));
      if (run.figures.length) out.push(el('h2', null, 'Figures'));
      out.push(el('div', { 'class': 'figures' }, run.figures.map(function (f) {
        return el('figure', null, el('img', { src: 'data:image/png;base64,' + f.png, alt: f.title }), el('figcaption', { 'class': 'muted' }, f.title + ' (' + f.name + ')'));
      })));
      if (run.tables.length) out.push(el('h2', null, 'Tables'));
      run.tables.forEach(function (t) { if (t !== paired) out.push(reportTable(t)); });
      if (!run.tables.length) out.push(el('p', { 'class': 'muted' }, 'No report tables in this run\u2019s report/ directory.'));
    });
    return out;
  }

  // ------------------------------------------------------------------------------------
  // Trials view
  // ------------------------------------------------------------------------------------
  // what a reader scans first, then every other column in the results table's order
  var FRONT = ['task', 'difficulty', 'law_version', 'noise', 'rollout', 'configuration', 'model', 'credited', 'rmsle', 'measurements', 'status', 'judge_reason', 'final law'];
  var TABLE_COLUMNS = (function () {
    var all = COLUMNS.concat([{ name: 'final law', kind: 'str' }]);
    var front = FRONT.map(function (n) { return all.filter(function (c) { return c.name === n; })[0]; }).filter(Boolean);
    if (MULTI) front.unshift(all[0]);  // the run
    return front.concat(all.filter(function (c) { return front.indexOf(c) < 0; }));
  })();
  function trialValue(t, name) { return name === 'final law' ? t.final : t.c[name]; }
  function toCsv(list) {
    function q(v) {
      var s = cellText(v);
      if (typeof v === 'number') s = Number.isNaN(v) ? 'NaN' : String(v);
      return /[",\r\n]/.test(s) || /^\s|\s$/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
    }
    var lines = [TABLE_COLUMNS.map(function (c) { return q(c.name); }).join(',')];
    list.forEach(function (t) { lines.push(TABLE_COLUMNS.map(function (c) { return q(trialValue(t, c.name)); }).join(',')); });
    return lines.join('\r\n') + '\r\n';
  }
  function download(name, text, type) {
    var url = URL.createObjectURL(new Blob([text], { type: type }));
    var a = el('a', { href: url, download: name });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 2000);
  }
  var current = { list: [], pos: -1, more: null };
  // rows of the trials table drawn at once (and at each "Show more")
  var PAGE_ROWS = 500;
  function viewTrials(s) {
    var countEl = el('strong', { id: 'trial-count' }, '0');
    var tbody = el('tbody');
    var headRow = el('tr');
    var table = el('table', { 'class': 'data', id: 'trials-table' }, el('thead', null, headRow), tbody);
    function refresh() {
      var list = filtered(s);
      current.list = list;
      if (current.pos >= list.length) current.pos = list.length - 1;
      countEl.textContent = String(list.length);
      countEl.setAttribute('data-total', String(ALL.length));
      while (headRow.firstChild) headRow.removeChild(headRow.firstChild);
      TABLE_COLUMNS.forEach(function (c) {
        var cls = s.sort === c.name ? 'sorted-asc' : (s.sort === '-' + c.name ? 'sorted-desc' : null);
        headRow.appendChild(el('th', {
          'class': cls, 'data-column': c.name, title: 'sort by ' + c.name,
          onclick: function () { s.sort = s.sort === c.name ? '-' + c.name : (s.sort === '-' + c.name ? '' : c.name); replace(s); refresh(); }
        }, c.name));
      });
      while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
      showRows(Math.max(PAGE_ROWS, current.pos + 1));
    }
    // rows are drawn a page at a time: a run of tens of thousands of trials filters and sorts them
    // all, and draws those a reader scrolls to (the button, or j past the last row drawn)
    function showRows(upto) {
      var list = current.list;
      var frag = document.createDocumentFragment();
      for (var k = tbody.childNodes.length; k < Math.min(upto, list.length); k++) frag.appendChild(trialRow(list[k], k));
      tbody.appendChild(frag);
      var rest = list.length - tbody.childNodes.length;
      more.hidden = rest <= 0;
      more.textContent = 'Show ' + Math.min(PAGE_ROWS, rest) + ' more (' + rest + ' not drawn)';
    }
    function trialRow(t, k) {
      var tr = el('tr', { 'data-trial-id': t.id, 'data-run': String(t.r), 'class': k === current.pos ? 'current' : null, onclick: function () { openTrial(t, s); } });
      TABLE_COLUMNS.forEach(function (c) {
        var v = trialValue(t, c.name);
        var cls = c.kind === 'num' ? 'num' : (c.name === 'final law' ? 'law' : (c.name === 'judge_reason' || c.name === 'error' ? 'text' : null));
        var td = el('td', cls ? { 'class': cls } : null, fmt(v, c.kind));
        if (cls === 'law' || cls === 'text') td.title = cellText(v);
        tr.appendChild(td);
      });
      return tr;
    }
    var more = el('button', { id: 'more-rows', hidden: true, onclick: function () { showRows(tbody.childNodes.length + PAGE_ROWS); } });
    current.more = function () { showRows(tbody.childNodes.length + PAGE_ROWS); };
    var cats = el('div', { 'class': 'filters', id: 'category-filters' }, CATEGORIES.map(function (c) {
      var sel = el('select', { 'data-filter': c.name, onchange: function () { if (sel.value === '') delete s.cat[c.name]; else s.cat[c.name] = sel.value; current.pos = -1; replace(s); refresh(); } },
        el('option', { value: '' }, 'all'), c.values.map(function (v) { return el('option', { value: v === '' ? EMPTY : v }, v === '' ? EMPTY : v); }));
      sel.value = c.name in s.cat ? s.cat[c.name] : '';
      return el('label', null, c.name, sel);
    }));
    var search = el('input', { type: 'search', id: 'trial-search', placeholder: 'final law, judge reason, any text', size: 40,
      oninput: function () { s.q = search.value; current.pos = -1; replace(s); refresh(); } });
    search.value = s.q;
    var ranges = el('div', { 'class': 'ranges', id: 'range-filters' }, NUMERIC.map(function (name) {
      var r = s.rng[name] || [null, null];
      function box(j) {
        var inp = el('input', { type: 'number', step: 'any', 'data-range': name, 'data-bound': j === 0 ? 'min' : 'max', placeholder: j === 0 ? 'min' : 'max',
          oninput: function () {
            var v = inp.value === '' ? null : Number(inp.value);
            var cur = s.rng[name] || [null, null];
            cur[j] = v !== null && Number.isNaN(v) ? null : v;
            s.rng[name] = cur;
            if (cur[0] === null && cur[1] === null) delete s.rng[name];
            current.pos = -1; replace(s); refresh();
          } });
        if (r[j] !== null) inp.value = String(r[j]);
        return inp;
      }
      return el('label', null, name, el('span', null, box(0), ' \u2013 ', box(1)));
    }));
    // filters the selects cannot show (a heatmap click on a numeric condition such as noise)
    var shownCats = CATEGORIES.map(function (c) { return c.name; });
    var hidden = Object.keys(s.cat).filter(function (k) { return shownCats.indexOf(k) < 0; });
    var hiddenLine = hidden.length ? el('p', { 'class': 'muted', id: 'other-filters' }, 'Also filtered by: ' + hidden.map(function (k) { return k + ' = ' + s.cat[k]; }).join(', ') + ' (Clear filters removes them).') : null;
    var rangeBox = el('details', Object.keys(s.rng).length ? { open: true } : null, el('summary', null, 'Numeric ranges'), ranges);
    var bar = el('div', { 'class': 'bar' },
      el('span', null, countEl, ' of ' + ALL.length + ' trials shown'),
      el('label', null, 'Search ', search),
      el('button', { id: 'download-csv', onclick: function () { download('trials-filtered.csv', toCsv(filtered(s)), 'text/csv;charset=utf-8'); } }, 'Download CSV'),
      el('button', { onclick: function () { go({ view: 'trials', cat: {}, rng: {}, q: '', sort: '' }); } }, 'Clear filters'),
      el('span', { 'class': 'muted' }, 'Keys: ', el('span', { 'class': 'kbd' }, 'j'), '/', el('span', { 'class': 'kbd' }, 'k'), ' next/previous row, ',
        el('span', { 'class': 'kbd' }, 'Enter'), ' open; in a trial ', el('span', { 'class': 'kbd' }, 'j'), '/', el('span', { 'class': 'kbd' }, 'k'), ' next/previous trial.'));
    refresh();
    return [el('h2', null, 'Trials'), cats, hiddenLine, rangeBox, bar, el('div', { 'class': 'scroll tall' }, table, more)];
  }
  function openTrial(t, s) {
    var st = filterOnly(s);
    st.view = 'trial';
    st.run = String(t.r);
    st.id = t.id;
    go(st);
  }
  function moveRow(step) {
    var rows = document.querySelectorAll('#trials-table tbody tr');
    if (current.more && current.pos + step >= rows.length && rows.length < current.list.length) {
      current.more();
      rows = document.querySelectorAll('#trials-table tbody tr');
    }
    if (!rows.length) return;
    if (current.pos >= 0 && rows[current.pos]) rows[current.pos].classList.remove('current');
    current.pos = Math.max(0, Math.min(rows.length - 1, current.pos + step));
    rows[current.pos].classList.add('current');
    rows[current.pos].scrollIntoView({ block: 'nearest' });
  }

  // ------------------------------------------------------------------------------------
  // One trial
  // ------------------------------------------------------------------------------------
  function taskFacts(t) {
    var run = RUNS[t.r];
    return run.tasks[t.c.task + '|' + t.c.difficulty + '|' + t.c.law_version] || { error: 'no task facts' };
  }
  function eventAdds(e) {
    if (e.event === 'bootstrap' && Array.isArray(e.X)) return e.X.length;
    if (e.measured && Array.isArray(e.measured.X)) return e.measured.X.length;
    return 0;
  }
  function observationSlices(rec) {
    // [before, added] for each event: observations earlier than the event and those it measured
    var obs = rec.observations || {};
    var total = Array.isArray(obs.X) ? obs.X.length : 0;
    var n = 0;
    return (rec.events || []).map(function (e) {
      var add = eventAdds(e);
      var before = Math.min(n, total);
      n += add;
      return [before, Math.min(add, total - before)];
    });
  }
  function eventLabel(e) {
    if (e.action && e.action.kind) return e.action.kind;
    return e.event || '?';
  }
  function toldText(e) {
    var o = e.observation;
    if (!o) {
      var parts = [];
      Object.keys(e).forEach(function (k) { if (['event', 'phase', 'X', 'y'].indexOf(k) < 0) parts.push(k + ': ' + JSON.stringify(e[k])); });
      return parts.join('\n');
    }
    var head = 'observations ' + o.n_observations + (o.new_rows ? ' (' + o.new_rows + ' new)' : '') +
      ', measurements used ' + o.measurements_used + (o.measurements_left !== null && o.measurements_left !== undefined ? ', left ' + o.measurements_left : '') +
      ', turns left ' + o.turns_left + (o.allowed ? '; may: ' + o.allowed.join(', ') : '') + (o.draft_shown ? '; draft shown' : '');
    return o.feedback ? head + '\n' + o.feedback : head;
  }
  function didText(e) {
    var a = e.action;
    if (!a) return '';
    var out = [];
    if (a.raw) out.push(a.raw);
    if (a.hypotheses) out.push('hypotheses:\n' + a.hypotheses.map(function (h, i) { return '  ' + i + ': ' + h; }).join('\n'));
    if (a.code) out.push('code:\n' + a.code);
    if (a.points) out.push(a.points.length + ' point(s) requested');
    if (a.source && a.kind !== 'final' && a.kind !== 'draft') out.push(a.source);
    if (a.error) out.push('error: ' + a.error);
    return out.join('\n');
  }
  function metrics(t) {
    return el('dl', { 'class': 'metrics' }, COLUMNS.filter(function (c) { return c.name !== 'judge_reason'; }).map(function (c) {
      var v = t.c[c.name];
      var dd = el('dd', { title: cellText(v) }, fmt(v, c.kind));
      if (c.name === 'credited' || c.name === 'valid' || c.name === 'complete') dd.className = v ? 'yes' : 'no';
      return el('div', null, el('dt', null, c.name), dd);
    }));
  }
  function lawsBlock(t, rec) {
    var f = taskFacts(t);
    var hidden = f.error ? f.error : f.hidden_law;
    var consts = f.constants ? Object.keys(f.constants).map(function (k) { return k + ' = ' + f.constants[k]; }).join('\n') : '';
    return el('div', { 'class': 'two' },
      el('div', null, el('h3', null, 'Submitted law (origin: ' + (rec.submission_origin || '?') + ')'), pre(rec.final_source || '(none)', 'final-law')),
      el('div', null, el('h3', null, 'Hidden law' + (f.title ? ' \u2014 ' + f.title : '')), pre(hidden, 'hidden-law'),
        consts ? pre(consts) : null, f.law_expression ? el('p', { 'class': 'muted' }, 'as an expression: ', el('code', null, String(f.law_expression))) : null));
  }
  function verdictBlock(t, rec) {
    var j = rec.judge || {};
    var credited = !!j.credited;
    return el('div', { 'class': 'verdict ' + (credited ? 'credited' : 'uncredited') },
      el('div', null, el('span', { 'class': credited ? 'yes' : 'no' }, credited ? 'credited' : 'not credited'), ' by judge ', el('strong', null, String(j.judge || 'none')),
        ' (status ' + String(j.status || '?') + '); trial status ' + String(rec.status) + (rec.error ? '; error: ' + rec.error : '')),
      el('div', { 'class': 'judge-reason' }, String(j.reason || '')));
  }
  function fitCell(v) { return typeof v === 'number' ? fmtNum(v) : fmt(v, 'str'); }
  function committeeBlock(e, k) {
    var sel = e.selection || {};
    var hyps = sel.hypotheses || [];
    var parsed = (e.committee && e.committee.parsed) || [];
    var out = el('div', { 'class': 'committee', 'data-event': String(k) });
    out.appendChild(el('h3', null, 'Committee, ' + e.phase + ' turn ' + e.turn + (sel.fallback_used ? ' (fallback used)' : '')));
    if (hyps.length) {
      var cols = [{ name: '#', kind: 'num' }, { name: 'hypothesis', kind: 'str' }, { name: 'fit ok', kind: 'bool' }, { name: 'fit error', kind: 'num' },
                  { name: 'a', kind: 'num' }, { name: 'b', kind: 'num' }, { name: 'survivor', kind: 'bool' }, { name: 'parse error', kind: 'str' }];
      out.appendChild(dataTable(cols, hyps.map(function (h) {
        return [h.position, h.parsed || h.text, h.fit_ok, num(h.fit_error), num(h.a), num(h.b), h.kept, h.parse_error];
      })));
    } else if (parsed.length) {
      out.appendChild(dataTable([{ name: 'hypothesis', kind: 'str' }, { name: 'parsed', kind: 'bool' }, { name: 'canonical', kind: 'str' }],
        parsed.map(function (h) { return [h.text, h.ok, h.canonical]; })));
    }
    if (e.committee && e.committee.dropped && e.committee.dropped.length) out.appendChild(el('p', { 'class': 'muted' }, 'dropped: ' + JSON.stringify(e.committee.dropped)));
    if (sel.chosen && sel.chosen.length) {
      out.appendChild(el('p', null, 'Chosen points (pool index, disagreement score raw / regularized, finite share):'));
      out.appendChild(dataTable([{ name: 'index', kind: 'num' }, { name: 'raw', kind: 'num' }, { name: 'regularized', kind: 'num' }, { name: 'finite fraction', kind: 'num' }],
        sel.chosen.map(function (c) { return [c.index, num(c.raw), num(c.regularized), num(c.finite_fraction)]; })));
    }
    if (sel.error) out.appendChild(el('p', { 'class': 'err' }, 'selection error: ' + sel.error));
    return out;
  }

  // -- the domain plot -------------------------------------------------------------------
  function axisOf(values, variable) {
    var fin = values.filter(function (v) { return typeof v === 'number' && isFinite(v); });
    var log = variable ? variable.scale === 'log' : (fin.length > 0 && fin.every(function (v) { return v > 0; }));
    var lo = variable ? variable.low : Infinity, hi = variable ? variable.high : -Infinity;
    fin.forEach(function (v) { if (!log || v > 0) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
    if (!isFinite(lo) || !isFinite(hi)) { lo = 0; hi = 1; log = false; }
    if (log && lo <= 0) log = false;
    var f = log ? function (v) { return Math.log10(v); } : function (v) { return v; };
    var a = f(lo), b = f(hi);
    if (a === b) { a -= 0.5; b += 0.5; }
    var pad = (b - a) * 0.04;
    return { log: log, f: f, a: a - pad, b: b + pad };
  }
  function ticks(ax) {
    var out = [];
    if (ax.log) {
      var step = Math.max(1, Math.ceil((ax.b - ax.a) / 6));
      for (var d = Math.ceil(ax.a); d <= ax.b; d += step) out.push([d, '1e' + d]);
      return out;
    }
    var span = ax.b - ax.a;
    var raw = span / 5;
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var st = [1, 2, 5, 10].map(function (m) { return m * mag; }).filter(function (x) { return x >= raw; })[0] || mag * 10;
    for (var v = Math.ceil(ax.a / st) * st; v <= ax.b; v += st) out.push([v, fmtNum(Number(v.toPrecision(6)))]);
    return out;
  }
  function domainPlot(t, rec, k, holder) {
    var f = taskFacts(t);
    var vars = f.variables || [];
    var obs = rec.observations || {};
    var X = obs.X || [], Y = obs.y || [], src = obs.source || [];
    var slices = observationSlices(rec);
    var sl = k === null || k === undefined || !slices[k] ? [X.length, 0] : slices[k];
    var end = sl[0] + sl[1];
    var choices = vars.map(function (v, i) { return { label: v.name + (v.scale === 'log' ? ' (log)' : ''), idx: i, v: v }; });
    choices.push({ label: (f.output || 'output') + ' (measured)', idx: -1, v: null });
    if (!holder.axes) holder.axes = [0, vars.length > 1 ? 1 : -1];
    function pick(j) {
      var s = el('select', { 'data-axis': j === 0 ? 'x' : 'y', onchange: function () { holder.axes[j] = Number(s.value); draw(); } },
        choices.map(function (c) { return el('option', { value: String(c.idx) }, c.label); }));
      s.value = String(holder.axes[j]);
      return s;
    }
    var box = el('div', { 'class': 'plotbox' });
    var svgHolder = el('div');
    function column(idx) { return idx < 0 ? Y.map(num) : X.map(function (row) { return Array.isArray(row) ? num(row[idx]) : null; }); }
    function draw() {
      var W = 520, H = 360, L = 62, R = 12, T = 12, B = 44;
      var cx = column(holder.axes[0]).slice(0, end), cy = column(holder.axes[1]).slice(0, end);
      var vx = holder.axes[0] >= 0 ? vars[holder.axes[0]] : null, vy = holder.axes[1] >= 0 ? vars[holder.axes[1]] : null;
      var ax = axisOf(cx, vx), ay = axisOf(cy, vy);
      function px(v) { return L + (ax.f(v) - ax.a) / (ax.b - ax.a) * (W - L - R); }
      function py(v) { return H - B - (ay.f(v) - ay.a) / (ay.b - ay.a) * (H - T - B); }
      var counts = { earlier: 0, selected: 0, bootstrap: 0 };
      var g = sv('g');
      var drawn = 0;
      for (var i = 0; i < end; i++) {
        var x = cx[i], y = cy[i];
        var kind = src[i] === 'bootstrap' ? 'bootstrap' : (i >= sl[0] ? 'selected' : 'earlier');
        counts[kind]++;
        if (x === null || y === null || !isFinite(x) || !isFinite(y) || (ax.log && x <= 0) || (ay.log && y <= 0)) continue;
        var X0 = px(x), Y0 = py(y);
        var title = sv('title', null, '#' + (i + 1) + ' ' + (src[i] || '') + (i >= sl[0] ? ' (this turn)' : '') + ': ' +
          vars.map(function (v, j) { return v.name + '=' + fmtNum(num(X[i][j])); }).join(', ') + ', ' + (f.output || 'y') + '=' + fmtNum(num(Y[i])));
        var thisTurn = i >= sl[0];
        var shape;
        if (kind === 'bootstrap') {
          var s = thisTurn ? 6 : 4.5;
          shape = sv('path', { 'class': 'pt bootstrap' + (thisTurn ? ' now' : ''), d: 'M' + X0 + ',' + (Y0 - s) + 'L' + (X0 + s) + ',' + (Y0 + s * 0.8) + 'L' + (X0 - s) + ',' + (Y0 + s * 0.8) + 'Z' }, title);
        } else if (kind === 'selected') {
          shape = sv('rect', { 'class': 'pt selected', x: X0 - 4.5, y: Y0 - 4.5, width: 9, height: 9 }, title);
        } else {
          shape = sv('circle', { 'class': 'pt earlier', cx: X0, cy: Y0, r: 3.5 }, title);
        }
        g.appendChild(shape);
        drawn++;
      }
      var svgEl = sv('svg', { 'class': 'plot', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'data-points': String(drawn), 'data-earlier': String(counts.earlier),
        'data-selected': String(counts.selected), 'data-bootstrap': String(counts.bootstrap), 'data-log-x': ax.log ? '1' : '0', 'data-log-y': ay.log ? '1' : '0' });
      ticks(ax).forEach(function (tk) {
        var X0 = L + (tk[0] - ax.a) / (ax.b - ax.a) * (W - L - R);
        svgEl.appendChild(sv('line', { 'class': 'grid', x1: X0, x2: X0, y1: T, y2: H - B }));
        svgEl.appendChild(sv('text', { x: X0, y: H - B + 14, 'text-anchor': 'middle' }, tk[1]));
      });
      ticks(ay).forEach(function (tk) {
        var Y0 = H - B - (tk[0] - ay.a) / (ay.b - ay.a) * (H - T - B);
        svgEl.appendChild(sv('line', { 'class': 'grid', x1: L, x2: W - R, y1: Y0, y2: Y0 }));
        svgEl.appendChild(sv('text', { x: L - 4, y: Y0 + 3, 'text-anchor': 'end' }, tk[1]));
      });
      svgEl.appendChild(sv('line', { 'class': 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }));
      svgEl.appendChild(sv('line', { 'class': 'axis', x1: L, x2: L, y1: T, y2: H - B }));
      svgEl.appendChild(sv('text', { x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle' }, choices[holder.axes[0] < 0 ? choices.length - 1 : holder.axes[0]].label + (ax.log ? ', log axis' : '')));
      svgEl.appendChild(sv('text', { x: 12, y: (T + H - B) / 2, 'text-anchor': 'middle', transform: 'rotate(-90 12 ' + (T + H - B) / 2 + ')' },
        choices[holder.axes[1] < 0 ? choices.length - 1 : holder.axes[1]].label + (ay.log ? ', log axis' : '')));
      svgEl.appendChild(g);
      while (svgHolder.firstChild) svgHolder.removeChild(svgHolder.firstChild);
      svgHolder.appendChild(svgEl);
      legend.textContent = '';
      add(legend, [el('span', { 'class': 'k-earlier' }, '\u25CF earlier observations: ' + counts.earlier), el('span', { 'class': 'k-selected' }, '\u25A0 this turn\u2019s selections: ' + counts.selected),
        el('span', { 'class': 'k-bootstrap' }, '\u25B2 bootstrap probes: ' + counts.bootstrap), el('span', { 'class': 'muted' }, (end - drawn) ? (end - drawn) + ' not drawn (non-finite or not positive on a log axis)' : '')]);
    }
    var legend = el('div', { 'class': 'legend' });
    add(box, [el('div', { 'class': 'bar' }, el('label', null, 'x ', pick(0)), el('label', null, 'y ', pick(1))), svgHolder, legend]);
    draw();
    return box;
  }
  function observationTable(t, rec, k) {
    var f = taskFacts(t);
    var obs = rec.observations || {};
    var X = obs.X || [], Y = obs.y || [], src = obs.source || [];
    var slices = observationSlices(rec);
    var sl = k === null || k === undefined || !slices[k] ? [X.length, 0] : slices[k];
    var names = (f.variables || []).map(function (v) { return v.name; });
    var d = X.length ? X[0].length : names.length;
    var cols = [{ name: '#', kind: 'num' }, { name: 'source', kind: 'str' }, { name: 'this turn', kind: 'bool' }];
    for (var j = 0; j < d; j++) cols.push({ name: names[j] || ('x' + j), kind: 'num' });
    cols.push({ name: f.output || 'y', kind: 'num' });
    var rows = [];
    for (var i = 0; i < sl[0] + sl[1]; i++) rows.push([i + 1, src[i] || '', i >= sl[0]].concat((Array.isArray(X[i]) ? X[i] : []).map(num)).concat([num(Y[i])]));
    return el('div', { 'class': 'obs-table', 'data-rows': String(rows.length) }, el('p', null, rows.length + ' observation(s) as of this turn (of ' + X.length + ' in the trial).'), dataTable(cols, rows));
  }
  function chatBlock(rec) {
    var chat = rec.chat || [];
    if (!chat.length) return el('p', { 'class': 'muted' }, 'No chat: this policy does not talk to a model (offline agent).');
    return el('div', { 'class': 'chat' }, chat.map(function (m, i) {
      if (!m.role) return el('div', { 'class': 'event' }, '\u2014 ' + Object.keys(m).map(function (k) { return k + ': ' + cellText(typeof m[k] === 'object' ? JSON.stringify(m[k]) : m[k]); }).join(', ') + ' \u2014');
      var c = m.call;
      var info = c ? [el('span', null, 'model ' + c.model), el('span', null, 'finish_reason ' + c.finish_reason), el('span', null, 'tokens ' + c.prompt_tokens + ' in / ' + c.completion_tokens + ' out'),
        el('span', null, 'latency ' + c.latency_s + ' s'), el('span', null, 'attempts ' + c.attempts), el('span', { 'class': 'cache' }, c.from_cache ? 'cache hit' : 'paid call')] : [];
      return el('div', { 'class': 'msg', 'data-role': m.role, 'data-index': String(i) }, el('div', { 'class': 'who' }, m.role, info), pre(m.content));
    }));
  }
  function interpreterBlock(rec) {
    var rows = (rec.events || []).filter(function (e) { return e.action && e.action.code; });
    if (!rows.length) return null;
    return el('div', null, el('h2', null, 'Interpreter'), rows.map(function (e) {
      var an = e.analysis || {};
      var output = (an.stdout || '') + (an.error ? '\nerror: ' + an.error : '') + (an.truncated ? '\n[output truncated]' : '');
      return el('div', { 'class': 'two interp' }, el('div', null, el('h3', null, e.phase + ' turn ' + e.turn + ': code'), pre(e.action.code)),
        el('div', null, el('h3', null, 'output' + (an.ok === false ? ' (failed)' : '')), pre(output || e.feedback || '')));
    }));
  }
  function trialPage(t, rec, opts) {
    opts = opts || {};
    var events = rec.events || [];
    var selK = opts.ev !== null && opts.ev !== undefined && events[opts.ev] ? Number(opts.ev) : null;
    if (selK === null) {  // the last event that measured something
      for (var q = events.length - 1; q >= 0; q--) if (eventAdds(events[q]) > 0) { selK = q; break; }
    }
    var page = el('div', { 'class': 'trial-page', 'data-trial-id': t.id });
    var plotState = {};
    var turnBox = el('div', { 'class': 'turn-detail' });
    function showTurn(k) {
      selK = k;
      Array.prototype.forEach.call(page.querySelectorAll('table.timeline tbody tr'), function (tr) { tr.classList.toggle('sel', Number(tr.getAttribute('data-event')) === k); });
      turnBox.textContent = '';
      var e = events[k] || {};
      add(turnBox, [el('h3', null, 'Event ' + k + ': ' + (e.phase || '') + (e.turn !== undefined ? ' turn ' + e.turn : '') + ' \u2014 ' + eventLabel(e)),
        el('div', { 'class': opts.narrow ? '' : 'two' }, el('div', null, domainPlot(t, rec, k, plotState)), el('div', { 'class': 'scroll tall' }, observationTable(t, rec, k)))]);
      if (opts.onTurn) opts.onTurn(k);
    }
    // an LLM policy's k-th decision is its k-th prompt and reply: shown in the timeline when the counts agree
    var users = (rec.chat || []).filter(function (m) { return m.role === 'user'; });
    var replies = (rec.chat || []).filter(function (m) { return m.role === 'assistant'; });
    var decisions = events.filter(function (e) { return e.observation && e.action; });
    var linked = users.length > 0 && users.length === decisions.length && replies.length === decisions.length;
    var tl = el('tbody');
    events.forEach(function (e, k) {
      var d = linked ? decisions.indexOf(e) : -1;
      var prompt = d >= 0 ? el('details', { 'class': 'prompt' }, el('summary', null, 'prompt sent (' + users[d].content.length + ' characters)'), pre(users[d].content)) : null;
      var reply = d >= 0 ? el('details', { 'class': 'reply' }, el('summary', null, 'reply (' + replies[d].content.length + ' characters)'), pre(replies[d].content)) : null;
      tl.appendChild(el('tr', { 'data-event': String(k), onclick: function (ev) { if (!ev.target.closest('details')) showTurn(k); } },
        el('td', { 'class': 'num' }, k), el('td', null, e.phase || ''), el('td', { 'class': 'num' }, e.turn === undefined ? '' : e.turn), el('td', null, eventLabel(e)),
        el('td', null, pre(toldText(e)), prompt), el('td', null, didText(e) ? pre(didText(e)) : '', reply), el('td', null, cellText(e.outcome || e.reason || (e.measured !== undefined && typeof e.measured === 'number' ? e.measured + ' measured' : '')))));
    });
    var timeline = el('div', { 'class': 'scroll' }, el('table', { 'class': 'data timeline' }, el('thead', null, el('tr', null, ['#', 'phase', 'turn', 'action', 'what it was told', 'what it did', 'outcome'].map(function (h) { return el('th', null, h); }))), tl));
    var committees = events.map(function (e, k) { return e.selection || e.committee ? committeeBlock(e, k) : null; }).filter(Boolean);
    var raw = el('pre', { id: opts.narrow ? null : 'raw-json' });
    var rawBox = el('details', { ontoggle: function () { if (rawBox.open && !raw.textContent) raw.textContent = JSON.stringify(rec, null, 2); } },
      el('summary', null, 'Raw JSON (the stored transcript, indented' + (t.sha ? '; sha256 ' + t.sha.slice(0, 16) + '\u2026' : '') + ')'), raw);
    add(page, [
      opts.narrow ? null : metrics(t),
      lawsBlock(t, rec),
      rec.draft ? el('div', null, el('h3', null, 'Draft' + (rec.draft === rec.final_source ? ' (the submitted law)' : '')), pre(rec.draft)) : el('p', { 'class': 'muted' }, 'No draft.'),
      verdictBlock(t, rec),
      el('h2', null, 'Timeline'), el('p', { 'class': 'muted' }, 'Click an event to see the domain and the observations as of that event.'), timeline,
      turnBox,
      committees.length ? el('h2', null, 'Committees') : null, committees,
      interpreterBlock(rec),
      (rec.diagnostics || []).length ? el('h2', null, 'Diagnostics shown') : null,
      (rec.diagnostics || []).map(function (d) { return pre(d.text || JSON.stringify(d, null, 1)); }),
      el('h2', null, 'Chat'), chatBlock(rec),
      el('h2', null, 'Synthesis input'), rec.synthesis_input ? pre(JSON.stringify(rec.synthesis_input, null, 2), 'synthesis-input') : el('p', { 'class': 'muted' }, 'None (baselines have no synthesis phase).'),
      rawBox
    ]);
    if (selK !== null) showTurn(selK);
    page.showTurn = function (k) { if (events[k]) showTurn(k); };
    return page;
  }
  function viewTrial(s) {
    var r = s.run === null ? 0 : Number(s.run);
    var t = s.id ? findTrial(r, s.id) : null;
    var list = filtered(s);
    current.list = list;
    if (!t) t = list[0] || ALL[0];
    if (!t) return [el('p', null, 'No trials in this run.')];
    var pos = list.indexOf(t);
    current.pos = pos;
    function step(d) {
      if (!list.length) return;
      var n = list[(pos < 0 ? 0 : (pos + d + list.length) % list.length)];
      var st = filterOnly(s); st.view = 'trial'; st.run = String(n.r); st.id = n.id; go(st);
    }
    var head = el('div', { 'class': 'bar' },
      el('button', { id: 'prev-trial', onclick: function () { step(-1); } }, '\u2190 previous'),
      el('button', { id: 'next-trial', onclick: function () { step(1); } }, 'next \u2192'),
      el('span', null, (pos >= 0 ? (pos + 1) + ' of ' + list.length + ' trials in the current filter' : 'not in the current filter')),
      el('button', { onclick: function () { var st = filterOnly(s); st.view = 'trials'; go(st); } }, 'back to the table'));
    var title = el('h2', { id: 'trial-title' }, t.c.task + ' ' + t.c.difficulty + ' ' + t.c.law_version + (t.c.noise ? ' noise ' + t.c.noise : '') +
      ' \u00B7 ' + t.c.configuration + ' \u00B7 ' + t.c.model + ' \u00B7 rollout ' + t.c.rollout + (MULTI ? ' \u00B7 run ' + RUNS[t.r].name : ''));
    var body = el('div', { id: 'trial-body' }, el('p', { 'class': 'muted' }, 'decompressing the transcript\u2026'));
    loadRecord(t).then(function (rec) {
      body.textContent = '';
      body.appendChild(trialPage(t, rec, { ev: s.ev, onTurn: function (k) { s.ev = String(k); replace(s); } }));
      body.setAttribute('data-ready', '1');
    }).catch(function (err) {
      body.textContent = '';
      body.appendChild(el('p', { 'class': 'err' }, 'Cannot open the transcript: ' + err));
      body.appendChild(metrics(t));
      body.setAttribute('data-ready', '1');
    });
    return [head, title, body];
  }

  // ------------------------------------------------------------------------------------
  // Compare
  // ------------------------------------------------------------------------------------
  var PAIR_KEYS = ['task', 'difficulty', 'law_version', 'noise', 'rollout'];
  function sides() {
    var out = [], seen = {};
    ALL.forEach(function (t) {
      var key = t.r + '|' + t.c.model + '|' + t.c.configuration;
      if (!seen[key]) { seen[key] = true; out.push({ key: key, r: t.r, model: t.c.model, configuration: t.c.configuration }); }
    });
    return out;
  }
  function sideLabel(sd) { return (MULTI ? RUNS[sd.r].name + ': ' : '') + sd.configuration + ' (' + sd.model + ')'; }
  function pairKey(t) { return PAIR_KEYS.map(function (k) { return cellText(t.c[k]); }).join('|'); }
  function viewCompare(s) {
    var all = sides();
    if (all.length < 2) return [el('h2', null, 'Compare'), el('p', null, 'Only one configuration in this page: nothing to compare.')];
    var a = all.filter(function (x) { return x.key === s.a; })[0];
    var b = all.filter(function (x) { return x.key === s.b; })[0];
    if (!a) a = all[0];
    if (!b) {
      b = MULTI ? (all.filter(function (x) { return x.r !== a.r && x.configuration === a.configuration && x.model === a.model; })[0] ||
                   all.filter(function (x) { return x.r !== a.r; })[0]) : all.filter(function (x) { return x.key !== a.key; })[0];
    }
    function choose(which, cur) {
      var sel = el('select', { id: 'compare-' + which, onchange: function () { var st = { view: 'compare', cat: {}, rng: {}, q: '', sort: '' }; st.a = which === 'a' ? sel.value : a.key; st.b = which === 'b' ? sel.value : b.key; go(st); } },
        all.map(function (x) { return el('option', { value: x.key }, sideLabel(x)); }));
      sel.value = cur.key;
      return sel;
    }
    function ofSide(sd) {
      var m = {};
      ALL.forEach(function (t) { if (t.r === sd.r && t.c.model === sd.model && t.c.configuration === sd.configuration) m[pairKey(t)] = t; });
      return m;
    }
    var A = ofSide(a), B = ofSide(b);
    var keys = Object.keys(A).filter(function (k) { return k in B; });
    var gained = 0, lost = 0, both = 0, neither = 0, dm = [], dr = [];
    var rows = keys.map(function (k) {
      var ta = A[k], tb = B[k];
      var ca = !!ta.c.credited, cb = !!tb.c.credited;
      var change = ca === cb ? (ca ? 'both' : 'neither') : (cb ? 'gained' : 'lost');
      if (change === 'gained') gained++; else if (change === 'lost') lost++; else if (change === 'both') both++; else neither++;
      var ra = ta.c.rmsle, rb = tb.c.rmsle;
      var d = (typeof ra === 'number' && typeof rb === 'number' && isFinite(ra) && isFinite(rb)) ? rb - ra : null;
      if (d !== null) dr.push(d);
      var m = (typeof ta.c.measurements === 'number' && typeof tb.c.measurements === 'number') ? tb.c.measurements - ta.c.measurements : null;
      if (m !== null) dm.push(m);
      return { k: k, ta: ta, tb: tb, change: change, dr: d, dm: m };
    });
    function mean(xs) { return xs.length ? xs.reduce(function (p, q) { return p + q; }, 0) / xs.length : null; }
    function median(xs) { if (!xs.length) return null; var ys = xs.slice().sort(function (p, q) { return p - q; }); var n = ys.length; return n % 2 ? ys[(n - 1) / 2] : (ys[n / 2 - 1] + ys[n / 2]) / 2; }
    var summary = el('div', { id: 'compare-summary', 'data-pairs': String(keys.length), 'data-gained': String(gained), 'data-lost': String(lost) },
      el('p', null, keys.length + ' paired trials (same ' + PAIR_KEYS.join(', ') + '). Credits: B gained ', el('strong', { 'class': 'yes' }, String(gained)), ', B lost ', el('strong', { 'class': 'no' }, String(lost)),
        ', both credited ' + both + ', neither ' + neither + '.'),
      el('p', null, 'RMSLE B \u2212 A over ' + dr.length + ' pairs with both finite: mean ' + fmtNum(mean(dr)) + ', median ' + fmtNum(median(dr)) +
        '; B lower in ' + dr.filter(function (x) { return x < 0; }).length + ', higher in ' + dr.filter(function (x) { return x > 0; }).length + '. Measurements B \u2212 A: mean ' +
        fmtNum(mean(dm)) + ', median ' + fmtNum(median(dm)) + ' (' + dm.filter(function (x) { return x < 0; }).length + ' pairs with fewer in B).'));
    var tbody = el('tbody');
    var show = s.show || 'all';
    rows.forEach(function (p) {
      if (show === 'changed' ? (p.change !== 'gained' && p.change !== 'lost') : (show !== 'all' && p.change !== show)) return;
      tbody.appendChild(el('tr', { 'data-pair': p.k, 'class': p.change + (p.k === s.pair ? ' current' : ''), onclick: function () { var st = { view: 'compare', cat: {}, rng: {}, q: '', sort: '', a: a.key, b: b.key, pair: p.k, show: s.show }; go(st); } },
        PAIR_KEYS.map(function (k) { return el('td', null, fmt(p.ta.c[k], KIND[k])); }),
        el('td', { 'class': p.ta.c.credited ? 'yes' : 'no' }, p.ta.c.credited ? 'yes' : 'no'), el('td', { 'class': p.tb.c.credited ? 'yes' : 'no' }, p.tb.c.credited ? 'yes' : 'no'),
        el('td', { 'class': 'change' }, p.change),
        el('td', { 'class': 'num' }, fmtNum(p.ta.c.rmsle)), el('td', { 'class': 'num' }, fmtNum(p.tb.c.rmsle)), el('td', { 'class': 'num' }, fmtNum(p.dr)),
        el('td', { 'class': 'num' }, fmtNum(p.ta.c.measurements)), el('td', { 'class': 'num' }, fmtNum(p.tb.c.measurements)), el('td', { 'class': 'num' }, fmtNum(p.dm))));
    });
    var showSel = el('select', { id: 'compare-show', onchange: function () { var st = { view: 'compare', cat: {}, rng: {}, q: '', sort: '', a: a.key, b: b.key, pair: s.pair, show: showSel.value === 'all' ? '' : showSel.value }; go(st); } },
      ['all', 'changed', 'gained', 'lost', 'both', 'neither'].map(function (v) { return el('option', { value: v }, v === 'all' ? 'all pairs' : (v === 'changed' ? 'credit changed' : v)); }));
    showSel.value = show;
    var table = el('div', { 'class': 'scroll pairs' }, el('table', { 'class': 'data', id: 'compare-table' }, el('thead', null, el('tr', null,
      PAIR_KEYS.concat(['A credited', 'B credited', 'change', 'A RMSLE', 'B RMSLE', '\u0394 RMSLE', 'A meas.', 'B meas.', '\u0394 meas.']).map(function (h) { return el('th', null, h); }))), tbody));
    var out = [el('h2', null, 'Compare'), el('div', { 'class': 'bar' }, el('label', null, 'A ', choose('a', a)), el('label', null, 'B ', choose('b', b)), el('label', null, 'show ', showSel)), summary, table];
    var pair = rows.filter(function (p) { return p.k === s.pair; })[0];
    if (pair) out.push(sideBySide(pair.ta, pair.tb));
    else out.push(el('p', { 'class': 'muted' }, 'Click a pair to see the two trials side by side, aligned by turn.'));
    return out;
  }
  function alignEvents(ea, eb) {
    function keyed(evs) {
      var count = {};
      return evs.map(function (e, k) {
        var base = (e.phase || '') + ':' + (e.turn !== undefined ? 'turn ' + e.turn : (e.event || '?'));
        count[base] = (count[base] || 0) + 1;
        return { key: base + '#' + count[base], label: (e.phase || '') + ' ' + (e.turn !== undefined ? 'turn ' + e.turn : (e.event || '')), k: k };
      });
    }
    var ka = keyed(ea), kb = keyed(eb);
    var order = ka.map(function (x) { return x.key; });
    var labels = {};
    ka.forEach(function (x) { labels[x.key] = x.label; });
    var last = -1;
    kb.forEach(function (x) {
      var at = order.indexOf(x.key);
      if (at >= 0) { last = at; return; }
      order.splice(last + 1, 0, x.key);
      labels[x.key] = x.label;
      last = last + 1;
    });
    var ia = {}, ib = {};
    ka.forEach(function (x) { ia[x.key] = x.k; });
    kb.forEach(function (x) { ib[x.key] = x.k; });
    return order.map(function (key) { return { label: labels[key], a: key in ia ? ia[key] : null, b: key in ib ? ib[key] : null }; });
  }
  function sideBySide(ta, tb) {
    var box = el('div', { id: 'side-by-side' }, el('p', { 'class': 'muted' }, 'decompressing both transcripts\u2026'));
    Promise.all([loadRecord(ta), loadRecord(tb)]).then(function (recs) {
      var ra = recs[0], rb = recs[1];
      box.textContent = '';
      function head(t, rec, name) {
        return el('div', null, el('div', { 'class': 'side-head' }, name + ': ' + t.c.configuration + ' \u00B7 ' + t.c.model + (MULTI ? ' \u00B7 ' + RUNS[t.r].name : '')),
          el('p', null, 'measurements ' + fmtNum(t.c.measurements) + ', RMSLE ' + fmtNum(t.c.rmsle) + ', ', el('span', { 'class': t.c.credited ? 'yes' : 'no' }, t.c.credited ? 'credited' : 'not credited')),
          el('h3', null, 'Submitted law (origin: ' + (rec.submission_origin || '?') + ')'), pre(rec.final_source || '(none)'),
          verdictBlock(t, rec), el('div', null, domainPlot(t, rec, null, {})));
      }
      var f = taskFacts(ta);
      box.appendChild(el('h2', null, 'Side by side: ' + ta.c.task + ' ' + ta.c.difficulty + ' ' + ta.c.law_version + ' rollout ' + ta.c.rollout));
      box.appendChild(el('h3', null, 'Hidden law'));
      box.appendChild(pre(f.hidden_law || f.error || ''));
      box.appendChild(el('div', { 'class': 'two' }, head(ta, ra, 'A'), head(tb, rb, 'B')));
      var rows = alignEvents(ra.events || [], rb.events || []);
      function cell(rec, k) {
        if (k === null) return el('td', { 'class': 'muted' }, '\u2014');
        var e = rec.events[k];
        return el('td', null, el('strong', null, eventLabel(e)), ' ', cellText(e.outcome || e.reason || ''), pre(didText(e) || toldText(e)));
      }
      var pageA = trialPage(ta, ra, { narrow: true }), pageB = trialPage(tb, rb, { narrow: true });
      box.appendChild(el('h3', null, 'Timeline aligned by phase and turn'));
      box.appendChild(el('p', { 'class': 'muted' }, 'Click a step to show it in both trial pages below.'));
      box.appendChild(el('div', { 'class': 'scroll' }, el('table', { 'class': 'data timeline aligned', id: 'aligned-timeline' },
        el('thead', null, el('tr', null, el('th', null, 'step'), el('th', null, 'A'), el('th', null, 'B'))),
        el('tbody', null, rows.map(function (row, j) {
          return el('tr', { 'data-step': String(j), onclick: function () {
            if (row.a !== null) pageA.showTurn(row.a);
            if (row.b !== null) pageB.showTurn(row.b);
            Array.prototype.forEach.call(box.querySelectorAll('#aligned-timeline tbody tr'), function (tr) { tr.classList.toggle('sel', tr.getAttribute('data-step') === String(j)); });
          } }, el('td', null, row.label), cell(ra, row.a), cell(rb, row.b));
        })))));
      box.appendChild(el('h3', null, 'The two trial pages'));
      box.appendChild(el('div', { 'class': 'two pages' }, el('div', { 'class': 'side', 'data-side': 'A' }, pageA), el('div', { 'class': 'side', 'data-side': 'B' }, pageB)));
      box.setAttribute('data-ready', '1');
      box.scrollIntoView({ block: 'start' });
    }).catch(function (err) { box.textContent = ''; box.appendChild(el('p', { 'class': 'err' }, 'Cannot open the transcripts: ' + err)); box.setAttribute('data-ready', '1'); });
    return box;
  }

  // ------------------------------------------------------------------------------------
  // Router and keys
  // ------------------------------------------------------------------------------------
  var STATE = null;
  function render() {
    STATE = readState();
    Array.prototype.forEach.call(document.querySelectorAll('#tabs a'), function (a) { a.classList.toggle('active', a.getAttribute('data-view') === STATE.view); });
    var view = { study: viewStudy, trials: viewTrials, trial: viewTrial, compare: viewCompare }[STATE.view] || viewStudy;
    var nodes = view(STATE);
    app.textContent = '';
    add(app, nodes);
    app.setAttribute('data-view', STATE.view);
    window.scrollTo(0, 0);
  }
  document.addEventListener('keydown', function (ev) {
    var tag = ev.target && ev.target.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (!STATE) return;
    if (STATE.view === 'trials') {
      if (ev.key === 'j' || ev.key === 'ArrowDown') { moveRow(1); ev.preventDefault(); }
      else if (ev.key === 'k' || ev.key === 'ArrowUp') { moveRow(-1); ev.preventDefault(); }
      else if (ev.key === 'Enter' && current.pos >= 0 && current.list[current.pos]) openTrial(current.list[current.pos], STATE);
    } else if (STATE.view === 'trial') {
      if (ev.key === 'j' || ev.key === 'ArrowRight') { var n = document.getElementById('next-trial'); if (n) n.click(); }
      else if (ev.key === 'k' || ev.key === 'ArrowLeft') { var p = document.getElementById('prev-trial'); if (p) p.click(); }
    }
  });
  window.addEventListener('hashchange', render);
  render();
})();
