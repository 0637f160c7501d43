// The report page: draws RunReportData's document (src/report/report_data.h)
// with ECharts, and diffs a candidate against its parent with jsdiff.
// Every string from the data enters the document as text (textContent,
// createTextNode) or as chart text drawn on a canvas; tooltips are built as
// elements the same way. Nothing from the data is ever parsed as HTML.
'use strict';

(function () {
  const STATUS_COLORS = {
    ok: '#2e7d32',
    compile_error: '#c62828',
    runtime_error: '#ad1457',
    timeout: '#6a1b9a',
    resource_limit: '#4527a0',
    wrong_answer: '#ef6c00',
    suspect: '#f9a825',
    forbidden: '#37474f',
  };
  const DUPLICATE_COLOR = '#9e9e9e';
  const ROLE_COLORS = ['#1565c0', '#2e7d32', '#ef6c00', '#6a1b9a', '#00838f', '#ad1457', '#5d4037'];

  const page = {
    data: null,
    charts: {},     // chart id -> ECharts instance (the tests read them through echarts.getInstanceByDom too)
    selected: {},   // task name -> the candidate id shown under its lineage
    text: '',       // the data as last fetched, to redraw only when it changed
  };

  // ---- Elements, text only ----

  function el(tag, className, ...children) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function table(headers, rows) {
    const t = el('table');
    const head = el('tr');
    for (const h of headers) head.append(el('th', null, h));
    t.append(el('thead', null, head));
    const body = el('tbody');
    for (const row of rows) {
      const tr = el('tr');
      for (const cell of row) tr.append(el('td', null, cell));
      body.append(tr);
    }
    t.append(body);
    return t;
  }

  function section(title, id) {
    const s = el('section');
    if (id) s.id = id;
    s.append(el('h2', null, title));
    return s;
  }

  // ---- Numbers in words ----

  function isNum(v) { return typeof v === 'number' && isFinite(v); }
  function percent(v) { return isNum(v) ? (v >= 10 ? v.toFixed(1) : v.toPrecision(3)) + '%' : '-'; }
  function seconds(v) {
    if (!isNum(v)) return '-';
    if (v >= 1) return v.toFixed(3) + ' s';
    if (v >= 1e-3) return (v * 1e3).toFixed(3) + ' ms';
    return (v * 1e6).toFixed(2) + ' \u00b5s';
  }
  function duration(v) {
    if (!isNum(v)) return '-';
    const s = Math.round(v);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return (h ? h + 'h ' : '') + (h || m ? m + 'm ' : '') + r + 's';
  }
  function dollars(v) { return isNum(v) ? '$' + v.toFixed(4) : '-'; }
  function speedupText(s) {
    if (!s || !isNum(s.speedup)) return '';
    let text = s.speedup.toFixed(2) + '\u00d7';
    if (s.pairs > 0) text += ' [' + s.ci_low.toFixed(2) + '\u2013' + s.ci_high.toFixed(2) + ']';
    else text += ' (medians)';
    if (s.disturbed) text += ' disturbed';
    return text;
  }
  function shorten(text, n) { return text.length > n ? text.slice(0, n - 1) + '\u2026' : text; }

  // ---- Charts ----

  function chartBox(id, height) {
    const box = el('div', 'chart');
    box.id = id;
    box.dataset.chart = id;
    box.style.height = (height || 320) + 'px';
    return box;
  }

  // Charts are made once their box is in the document, so that they know their size.
  const pending = [];
  // `option` may be a function of the box, for a chart laid out to its width.
  function chart(box, option, onClick) {
    pending.push(() => {
      const made = typeof option === 'function' ? option(box) : option;
      const c = echarts.init(box, null, { renderer: 'canvas' });
      c.setOption(made);
      if (onClick) c.on('click', onClick);
      page.charts[box.id] = c;
    });
  }

  // A tooltip as an element: lines of text.
  function tooltipOf(lines) {
    const box = el('div', 'tip');
    for (const line of lines) if (line) box.append(el('div', null, line));
    return box;
  }

  function statusColor(c) { return c.duplicate_of !== null ? DUPLICATE_COLOR : (STATUS_COLORS[c.status] || '#000'); }
  function statusName(c) { return c.duplicate_of !== null ? 'duplicate' : c.status; }

  // What a task's charts plot: the percentage of peak when scored, else the median latency in ms.
  function measureOf(task) {
    if (task.scored) return { name: '% of peak', of: (c) => c.percent_of_peak, best: (i) => i.best_percent, scale: 1 };
    return { name: 'median latency (ms)', of: (c) => (isNum(c.latency_s) ? c.latency_s * 1e3 : null),
             best: (i) => (isNum(i.best_latency_s) ? i.best_latency_s * 1e3 : null), scale: 1e3 };
  }

  function progressChart(task, index) {
    const box = chartBox('progress-' + index, 360);
    const m = measureOf(task);
    const values = task.candidates.map(m.of).filter((v) => isNum(v) && v > 0);
    if (task.scored) values.push(100);
    for (const i of task.iterations) if (isNum(m.best(i))) values.push(m.best(i));
    const lowest = values.length ? Math.min(...values) : 1;
    // Candidates without a measurement sit on a floor below every measured one.
    const floor = Math.pow(10, Math.floor(Math.log10(lowest)) - 1);
    const byStatus = {};
    for (const c of task.candidates) {
      const name = statusName(c);
      (byStatus[name] = byStatus[name] || []).push(c);
    }
    const series = [];
    const lines = [];
    if (isNum(task.baseline_percent) && task.scored) lines.push({ name: 'baseline', yAxis: task.baseline_percent });
    if (!task.scored) {
      const base = task.candidates.find((c) => c.id === task.baseline_id);
      if (base && isNum(base.latency_s)) lines.push({ name: 'baseline', yAxis: base.latency_s * 1e3 });
    }
    for (const a of task.anchors) if (task.scored) lines.push({ name: a.name, yAxis: a.percent_of_peak });
    if (task.scored) lines.push({ name: 'roofline bound (100%)', yAxis: 100 });
    series.push({
      name: 'best', type: 'line', step: 'end', symbolSize: 8, color: '#1565c0',
      data: task.iterations.filter((i) => isNum(m.best(i))).map((i) => [i.iteration, m.best(i), i.best_id]),
      markLine: {
        symbol: 'none', silent: true,
        label: { formatter: (p) => p.name, position: 'insideEndTop' },
        lineStyle: { type: 'dashed', color: '#555' },
        data: lines,
      },
    });
    // The step's interval carried onto the measure: the parent's percentage
    // times the speedup's ends, or the parent's latency over them.
    const byId = new Map(task.candidates.map((c) => [c.id, c]));
    const intervals = [];
    for (const i of task.iterations) {
      const s = i.step;
      if (!s || !(s.pairs > 0)) continue;
      const parent = byId.get(s.parent);
      if (task.scored && isNum(s.parent_percent))
        intervals.push([i.iteration, s.parent_percent * s.ci_low, s.parent_percent * s.ci_high, i.best_id]);
      else if (!task.scored && parent && isNum(parent.latency_s) && s.ci_low > 0)
        intervals.push([i.iteration, parent.latency_s * 1e3 / s.ci_high, parent.latency_s * 1e3 / s.ci_low, i.best_id]);
    }
    series.push({
      name: 'step interval', type: 'custom', color: '#1565c0', data: intervals, z: 3,
      renderItem: (params, api) => {
        const x = api.value(0);
        const a = api.coord([x, api.value(1)]), b = api.coord([x, api.value(2)]);
        const style = { stroke: '#1565c0', lineWidth: 1.5 };
        return { type: 'group', children: [
          { type: 'line', shape: { x1: a[0], y1: a[1], x2: b[0], y2: b[1] }, style },
          { type: 'line', shape: { x1: a[0] - 5, y1: a[1], x2: a[0] + 5, y2: a[1] }, style },
          { type: 'line', shape: { x1: b[0] - 5, y1: b[1], x2: b[0] + 5, y2: b[1] }, style },
        ] };
      },
    });
    const offsets = {};
    for (const [name, list] of Object.entries(byStatus)) {
      series.push({
        name, type: 'scatter', color: name === 'duplicate' ? DUPLICATE_COLOR : (STATUS_COLORS[name] || '#000'),
        symbol: name === 'ok' ? 'circle' : (name === 'duplicate' ? 'diamond' : 'triangle'), symbolSize: 9,
        data: list.map((c) => {
          // Candidates of one iteration spread a little, so that none hides another.
          const k = offsets[c.iteration] = (offsets[c.iteration] || 0) + 1;
          const v = m.of(c);
          return [c.iteration + ((k % 7) - 3) * 0.04, isNum(v) && v > 0 ? v : floor, c.id];
        }),
      });
    }
    const option = {
      animation: false,
      grid: { left: 70, right: 150, top: 40, bottom: 45 },
      legend: { top: 0, type: 'scroll' },
      tooltip: {
        trigger: 'item',
        formatter: (p) => {
          const id = Array.isArray(p.value) ? p.value[p.seriesName === 'step interval' ? 3 : 2] : null;
          const c = byId.get(id);
          if (p.seriesName === 'step interval' && c)
            return tooltipOf(['iteration ' + p.value[0] + ': step to candidate ' + c.id,
                              'side by side ' + speedupText(c.vs_parent),
                              task.scored ? 'so ' + percent(p.value[1]) + ' to ' + percent(p.value[2]) + ' of peak'
                                          : 'so ' + seconds(p.value[1] / 1e3) + ' to ' + seconds(p.value[2] / 1e3)]);
          if (!c) return tooltipOf([p.name || p.seriesName]);
          return tooltipOf([
            'candidate ' + c.id + ' (iteration ' + c.iteration + '), ' + statusName(c),
            task.scored ? percent(c.percent_of_peak) + ' of peak' : null,
            'median ' + seconds(c.latency_s) + (c.disturbed ? ' (disturbed)' : ''),
            c.vs_parent ? 'vs parent ' + speedupText(c.vs_parent) : null,
            shorten(c.plan_title, 100),
          ]);
        },
      },
      xAxis: { type: 'value', name: 'iteration', nameLocation: 'middle', nameGap: 28, minInterval: 1,
               min: -0.5, max: Math.max(0, ...task.iterations.map((i) => i.iteration)) + 0.5,
               axisLabel: { formatter: (v) => (Number.isInteger(v) ? String(v) : '') } },
      // The roofline bound stays in view: a kernel at 2% of peak is read against its 100%.
      yAxis: { type: 'log', name: m.name, min: floor, logBase: 10, axisLine: { onZero: false },
               max: task.scored ? (v) => Math.max(v.max, 100) : null },
      series,
    };
    chart(box, option, (p) => {
      const id = Array.isArray(p.value) ? p.value[p.seriesType === 'custom' ? 3 : 2] : null;
      if (byId.has(id)) select(task, index, id);
    });
    return box;
  }

  // ---- Lineage ----

  // Positions of a tree drawn left to right: depth across, leaves in order down.
  function treeLayout(task) {
    const children = new Map();
    const ids = new Set(task.candidates.map((c) => c.id));
    const roots = [];
    for (const c of task.candidates) {
      if (c.parent === null || !ids.has(c.parent)) roots.push(c);
      else {
        if (!children.has(c.parent)) children.set(c.parent, []);
        children.get(c.parent).push(c);
      }
    }
    const place = new Map();
    let row = 0;
    const visit = (c, depth) => {
      const kids = children.get(c.id) || [];
      // Failed and duplicate children hang below the ones that went on.
      kids.sort((a, b) => (a.status === 'ok' && a.duplicate_of === null ? 0 : 1) -
                          (b.status === 'ok' && b.duplicate_of === null ? 0 : 1) || a.id - b.id);
      if (!kids.length) place.set(c.id, { x: depth, y: row++ });
      else {
        const first = row;
        for (const k of kids) visit(k, depth + 1);
        place.set(c.id, { x: depth, y: (first + row - 1) / 2 });
      }
    };
    for (const r of roots) visit(r, 0);
    return place;
  }

  const ROW = 64, MARGIN = 40;

  function lineageChart(task, index) {
    const place = treeLayout(task);
    const depth = Math.max(0, ...[...place.values()].map((p) => p.x));
    const rows = Math.max(1, ...[...place.values()].map((p) => p.y + 1));
    // Node positions in pixels of the box, so that the graph's view scales
    // both ways alike (a view stretched one way only draws its symbols stretched).
    // A large search draws its rows closer (zoom and pan to read them), up to a page of 3000 px.
    const row = rows > 1 ? Math.min(ROW, 3000 / (rows - 1)) : ROW;
    const height = Math.max(2, (rows - 1) * row);
    const box = chartBox('lineage-' + index, height + 2 * MARGIN);
    const byId = new Map(task.candidates.map((c) => [c.id, c]));
    const layout = (width) => task.candidates.map((c) => {
      const p = place.get(c.id);
      const column = depth ? Math.max(120, (width - 2 * MARGIN) / depth) : 0;
      return { x: p.x * column, y: p.y * row };
    });
    const option = (box) => {
      const width = box.clientWidth;
      const at = layout(width);
      const span = Math.max(2, ...at.map((p) => p.x));
      const graph = lineageOption(task, byId, at, row);
      Object.assign(graph.series[0], { left: MARGIN, top: MARGIN, bottom: MARGIN, right: Math.max(MARGIN, width - MARGIN - span) });
      return graph;
    };
    chart(box, option, (p) => {
      if (p.dataType === 'node') select(task, index, p.data.value);
    });
    return box;
  }

  // Edge labels are drawn when rows leave room for them, else shown on hover;
  // symbols shrink with the rows, so that none covers its neighbour.
  function lineageOption(task, byId, at, row) {
    const labels = row >= 30;
    const size = (s) => Math.min(s, Math.max(4, row * 0.7));
    const nodes = task.candidates.map((c, k) => {
      const failed = c.status !== 'ok' || c.duplicate_of !== null;
      return {
        id: String(c.id), name: '#' + c.id, value: c.id, x: at[k].x, y: at[k].y,
        symbol: failed ? 'triangle' : 'circle', symbolSize: size(c.best_lineage ? 20 : (failed ? 11 : 15)),
        itemStyle: { color: statusColor(c), borderColor: c.best_lineage ? '#0d47a1' : '#fff', borderWidth: 2 },
        label: { show: labels, position: 'bottom', formatter: () => '#' + c.id },
      };
    });
    const links = task.candidates.filter((c) => c.parent !== null && byId.has(c.parent)).map((c) => {
      const failed = c.status !== 'ok' || c.duplicate_of !== null;
      const what = c.duplicate_of !== null ? 'duplicate of #' + c.duplicate_of
        : (c.status !== 'ok' ? c.status : speedupText(c.vs_parent) || 'not compared');
      return {
        source: String(c.parent), target: String(c.id),
        lineStyle: { type: failed ? 'dashed' : 'solid', width: c.best_lineage ? 3 : 1.2,
                     color: c.best_lineage ? '#0d47a1' : (failed ? '#bbb' : '#777') },
        label: { show: labels, formatter: () => shorten(c.plan_title, 40) + '  \u00b7  ' + what },
        emphasis: { label: { show: true } },
      };
    });
    return {
      animation: false,
      tooltip: {
        trigger: 'item',
        formatter: (p) => {
          if (p.dataType !== 'node') return null;
          const c = byId.get(p.data.value);
          return tooltipOf(['candidate ' + c.id + ', ' + statusName(c),
                            task.scored ? percent(c.percent_of_peak) + ' of peak' : 'median ' + seconds(c.latency_s),
                            shorten(c.plan_title, 100), 'click: its code and diff below']);
        },
      },
      series: [{
        type: 'graph', layout: 'none', roam: true,
        edgeSymbol: ['none', 'arrow'], edgeSymbolSize: 6,
        edgeLabel: { fontSize: 11, color: '#212121', position: 'end', align: 'right', verticalAlign: 'bottom', padding: [0, 14, 2, 0] },
        emphasis: { focus: 'adjacency' },
        data: nodes, links,
      }],
    };
  }

  // ---- A candidate: plan, source, diff ----

  function diffView(parent, c) {
    const pre = el('pre', 'diff');
    pre.dataset.role = 'diff';
    if (!parent) {
      pre.append(el('span', 'note', 'the baseline: it has no parent to diff against'));
      return pre;
    }
    const patch = Diff.createTwoFilesPatch('candidate ' + parent.id, 'candidate ' + c.id, parent.code, c.code,
                                           '', '', { context: 3 });
    for (const line of patch.split('\n')) {
      if (line.startsWith('====')) continue;  // jsdiff's separator above the file names
      let cls = null;
      if (line.startsWith('+++') || line.startsWith('---')) cls = 'file';
      else if (line.startsWith('@@')) cls = 'hunk';
      else if (line.startsWith('+')) cls = 'add';
      else if (line.startsWith('-')) cls = 'del';
      pre.append(el('span', cls, line + '\n'));
    }
    return pre;
  }

  function candidateView(task, c) {
    const box = el('div', 'candidate');
    box.dataset.candidate = String(c.id);
    const parent = task.candidates.find((p) => p.id === c.parent) || null;
    box.append(el('h4', null, 'Candidate ' + c.id + ' \u2014 ' + statusName(c) + ', iteration ' + c.iteration));
    const facts = [
      ['parent', parent ? '#' + parent.id : '(none: the baseline)'],
      ['% of peak', percent(c.percent_of_peak)],
      ['median latency', seconds(c.latency_s) + (c.disturbed ? ' (measured disturbed)' : '')],
      ['vs parent, side by side', c.vs_parent ? speedupText(c.vs_parent) : '-'],
      ['verdict', c.message || c.status],
    ];
    box.append(table(['', ''], facts));
    if (c.plan) box.append(el('details', null, el('summary', null, 'plan'), el('pre', 'plan', c.plan)));
    if (c.log) box.append(el('details', null, el('summary', null, 'build and run log'), el('pre', 'log', c.log)));
    box.append(el('h5', null, 'diff against its parent'));
    box.append(diffView(parent, c));
    const source = el('pre', 'source', c.code);
    source.dataset.role = 'source';
    box.append(el('details', null, el('summary', null, 'source'), source));
    return box;
  }

  function select(task, index, id) {
    const c = task.candidates.find((x) => x.id === id);
    const pane = document.getElementById('candidate-' + index);
    if (!c || !pane) return;
    page.selected[task.name] = id;
    pane.replaceChildren(candidateView(task, c));
  }

  // ---- Sections ----

  function runSection(data) {
    const r = data.run;
    const s = section('Run ' + r.id);
    const totals = data.llm.totals;
    s.append(table(['', ''], [
      ['created', r.created_at], ['status', r.status], ['target', r.target], ['shape', r.shape || '-'],
      ['tasks', r.tasks.join(', ')],
      ['LLM calls', totals.calls + ' (' + totals.input_tokens + ' tokens in, ' + totals.output_tokens + ' out, ' +
                    dollars(totals.cost_usd) + (totals.unpriced_calls ? ' + ' + totals.unpriced_calls + ' unpriced' : '') + ')'],
    ]));
    return s;
  }

  function suiteSection(data) {
    const s = section('Suite', 'suite');
    const g = data.suite;
    const names = data.tasks.map((t) => t.name);
    const scored = g.scored_tasks > 0;
    const speedup = isNum(g.geomean_speedup) ? g.geomean_speedup.toFixed(2) + '\u00d7' : '-';
    s.append(el('p', 'headline', scored
      ? 'geometric mean of the best % of peak over ' + g.scored_tasks + ' scored of ' + g.tasks + ' tasks: ' +
        percent(g.geomean_percent) + ' (baselines ' + percent(g.baseline_geomean_percent) + '); of the speedups: ' + speedup
      : 'unscored (no hardware profile): geometric mean of the best\'s speedup over the baseline, step by step, over ' +
        g.tasks + ' tasks: ' + speedup));
    const series = scored ? [
      { name: 'baseline', type: 'bar', color: '#90a4ae', data: data.tasks.map((t) => t.baseline_percent) },
      { name: 'best', type: 'bar', color: '#1565c0', data: data.tasks.map((t) => t.best_percent) },
    ] : [
      { name: 'speedup over the baseline', type: 'bar', color: '#1565c0',
        data: data.tasks.map((t) => (t.speedup ? t.speedup.estimate : null)) },
    ];
    if (scored && data.tasks.some((t) => t.anchors.length))
      series.push({ name: 'anchor', type: 'bar', color: '#ef6c00',
                    data: data.tasks.map((t) => (t.anchors.length ? Math.max(...t.anchors.map((a) => a.percent_of_peak)) : null)) });
    const box = chartBox('suite-bars', 300);
    chart(box, {
      animation: false, legend: { top: 0 }, grid: { left: 70, right: 30, top: 40, bottom: 60 },
      tooltip: { trigger: 'item', formatter: (p) => tooltipOf([p.name, p.seriesName + ': ' +
                                                              (scored ? percent(p.value) : p.value.toFixed(2) + '\u00d7')]) },
      xAxis: { type: 'category', data: names, axisLabel: { interval: 0, rotate: names.length > 6 ? 30 : 0 } },
      yAxis: { type: 'value', name: scored ? '% of peak' : 'speedup (\u00d7)' },
      series,
    });
    s.append(box);
    return s;
  }

  function taskSection(data, task, index) {
    const s = section('Task ' + task.name);
    s.classList.add('task');
    s.dataset.task = task.name;
    const best = task.candidates.find((c) => c.id === task.best_id);
    const sp = task.speedup;
    s.append(el('p', 'headline',
      'best: candidate ' + (best ? best.id : '-') + ', ' +
      (task.scored ? percent(task.best_percent) + ' of peak (baseline ' + percent(task.baseline_percent) + '), '
                   : 'unscored (no hardware profile), ') +
      'median ' + seconds(task.best_latency_s) +
      (sp && sp.steps > 0 ? ', ' + sp.estimate.toFixed(2) + '\u00d7 over the baseline step by step [' +
                            sp.low.toFixed(2) + '\u2013' + sp.high.toFixed(2) + '] in ' + sp.steps + ' steps' : '')));
    s.append(el('h3', null, (task.scored ? 'Best % of peak' : 'Best median latency') + ' per iteration, and every candidate'));
    s.append(progressChart(task, index));
    s.append(el('h3', null, 'Lineage (click a candidate for its code and its diff against its parent)'));
    s.append(lineageChart(task, index));
    const pane = el('div', 'candidate-pane');
    pane.id = 'candidate-' + index;
    s.append(pane);
    return s;
  }

  function lessonsSection(data) {
    const s = section('Lessons written', 'lessons');
    if (!data.lessons.length) {
      s.append(el('p', 'note', 'none: no pair of candidates cleared the thresholds for a lesson'));
      return s;
    }
    const list = el('ol', 'lessons');
    for (const l of data.lessons) {
      const item = el('li');
      item.append(el('strong', null, l.title || '(untitled)'));
      item.append(el('span', 'meta', ' ' + l.speedup.toFixed(2) + '\u00d7 [' + l.low.toFixed(2) + '\u2013' +
                     l.high.toFixed(2) + '], from candidate ' + l.slow + ' (slow) to ' + l.fast + ' (fast)' +
                     (l.task ? ', task ' + l.task : '') + ', memory ' + l.memory));
      item.append(el('details', null, el('summary', null, 'the lesson'), el('pre', 'lesson', l.text)));
      list.append(item);
    }
    s.append(list);
    return s;
  }

  function llmSection(data) {
    const s = section('Tokens and cost per role', 'llm');
    const calls = data.llm.calls;
    const roles = data.llm.roles.map((r) => r.role);
    const cumulative = (value) => roles.map((role, k) => {
      let sum = 0;
      const points = [];
      calls.forEach((c, i) => {
        if (c.role !== role) return;
        sum += value(c);
        points.push([isNum(c.at_s) ? c.at_s : i, sum]);
      });
      return { name: role, type: 'line', step: 'end', color: ROLE_COLORS[k % ROLE_COLORS.length], data: points };
    });
    const axis = { type: 'value', name: 'seconds since the first call', nameLocation: 'middle', nameGap: 28 };
    const tip = { trigger: 'item', formatter: (p) => tooltipOf([p.seriesName, 'at ' + duration(p.value[0]) + ': ' + p.value[1]]) };
    const tokens = chartBox('llm-tokens', 280);
    chart(tokens, { animation: false, legend: { top: 0 }, grid: { left: 80, right: 30, top: 40, bottom: 45 }, tooltip: tip,
                    xAxis: axis, yAxis: { type: 'value', name: 'tokens (in + out)' },
                    series: cumulative((c) => c.input_tokens + c.output_tokens) });
    const cost = chartBox('llm-cost', 280);
    chart(cost, { animation: false, legend: { top: 0 }, grid: { left: 80, right: 30, top: 40, bottom: 45 }, tooltip: tip,
                  xAxis: axis, yAxis: { type: 'value', name: 'cost (USD)' },
                  series: cumulative((c) => (isNum(c.cost_usd) ? c.cost_usd : 0)) });
    s.append(el('h3', null, 'Tokens over time'), tokens, el('h3', null, 'Cost over time'), cost);
    s.append(table(['role', 'calls', 'tokens in', 'tokens out', 'cost'],
                   data.llm.roles.map((r) => [r.role, r.calls, r.input_tokens, r.output_tokens, dollars(r.cost_usd)])));
    return s;
  }

  function hardwareSection(data) {
    const s = section('Hardware profile', 'hardware');
    const h = data.hardware;
    if (!h) {
      s.append(el('p', 'note', 'none: the run was not scored against a calibrated profile (no percentages of peak)'));
      return s;
    }
    const rows = [];
    for (const [key, value] of Object.entries(h))
      if (value === null || typeof value !== 'object') rows.push([key, String(value)]);
    s.append(table(['', ''], rows));
    return s;
  }

  function disturbedSection(data) {
    const s = section('Disturbed measurements', 'disturbed');
    if (!data.disturbed.length) {
      s.append(el('p', 'note', 'none: every measurement kept ran while the machine was quiet enough'));
      return s;
    }
    s.append(el('p', 'note', 'measured while other processes loaded the machine: shown, never deciding the beam or a lesson'));
    s.append(table(['task', 'candidate', 'measurement', 'others\' CPU share', 'series measured again'],
                   data.disturbed.map((d) => [d.task, '#' + d.candidate, d.kind, percent(d.other_load * 100), d.series])));
    return s;
  }

  function progressLine(progress) {
    if (!progress || typeof progress !== 'object') return '';
    const parts = [];
    if ('iteration' in progress) parts.push('iteration ' + progress.iteration);
    if ('candidates_evaluated' in progress) parts.push(progress.candidates_evaluated + ' candidates evaluated');
    if (progress.waiting_for) parts.push('waiting for ' + progress.waiting_for);
    if (isNum(progress.elapsed_s)) parts.push('elapsed ' + duration(progress.elapsed_s));
    if (isNum(progress.eta_s)) parts.push('about ' + duration(progress.eta_s) + ' left');
    return parts.join(' \u00b7 ');
  }

  // ---- The whole page ----

  function render(data) {
    for (const c of Object.values(page.charts)) c.dispose();
    page.charts = {};
    page.data = data;
    const root = document.getElementById('report');
    const scroll = window.scrollY;
    root.replaceChildren();
    const status = document.getElementById('status-line');
    const line = data && progressLine(data.progress);
    status.hidden = !line;
    status.textContent = line || '';
    if (!data || data.error) {
      root.append(el('p', 'error', 'No report: ' + (data ? data.error : 'no data')));
      return;
    }
    document.getElementById('title').textContent = 'accelopt run ' + data.run.id + ' \u2014 ' + data.run.tasks.join(', ');
    document.title = 'accelopt run ' + data.run.id;
    root.append(runSection(data));
    if (data.suite) root.append(suiteSection(data));
    data.tasks.forEach((task, index) => root.append(taskSection(data, task, index)));
    root.append(lessonsSection(data), llmSection(data), hardwareSection(data), disturbedSection(data));
    while (pending.length) pending.shift()();
    data.tasks.forEach((task, index) => {
      const keep = page.selected[task.name];
      const id = task.candidates.some((c) => c.id === keep) ? keep : task.best_id;
      if (id !== null) select(task, index, id);
    });
    window.scrollTo(0, scroll);
  }

  function readJson(id) { return JSON.parse(document.getElementById(id).textContent); }

  function poll(options) {
    const status = document.getElementById('status-line');
    fetch(options.live_api_url, { cache: 'no-store' })
      .then((r) => { if (!r.ok) throw new Error('HTTP ' + r.status); return r.text(); })
      .then((text) => {
        if (text !== page.text) { page.text = text; render(JSON.parse(text)); }
      })
      .catch((e) => { status.hidden = false; status.textContent = 'live data unavailable: ' + e.message; })
      .finally(() => setTimeout(() => poll(options), options.refresh_ms));
  }

  const options = readJson('report-options');
  window.accelopt = { page, select: (taskIndex, id) => select(page.data.tasks[taskIndex], taskIndex, id) };
  render(readJson('report-data'));
  window.addEventListener('resize', () => { for (const c of Object.values(page.charts)) c.resize(); });
  if (options.live_api_url) setTimeout(() => poll(options), options.refresh_ms);
})();
