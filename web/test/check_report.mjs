// node test/check_report.mjs REPORT.html OUT_DIR [TASK_INDEX:CANDIDATE_ID ...]
// Opens the report, clicks the named candidates in their task's lineage
// graph with the mouse, takes screenshots into OUT_DIR, and prints one JSON
// object of what it found: console and page errors, dialogs, each chart's
// series and point counts (through ECharts' own API), each lineage's node ids,
// and, per click, the candidate pane's heading, diff and source as text.
import { mkdirSync } from 'node:fs';
import { openReport } from './browser.mjs';

const [file, outDir, ...clicks] = process.argv.slice(2);
if (!file || !outDir) {
  console.error('usage: node test/check_report.mjs REPORT.html OUT_DIR [TASK_INDEX:CANDIDATE_ID ...]');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const { browser, page, seen } = await openReport(file);
try {
  const result = { ...seen };
  result.charts = await page.evaluate(() => {
    const out = {};
    for (const box of document.querySelectorAll('[data-chart]')) {
      const chart = echarts.getInstanceByDom(box);
      if (!chart) { out[box.id] = null; continue; }
      const option = chart.getOption();
      out[box.id] = {
        series: option.series.map((s) => ({
          name: s.name, type: s.type, points: (s.data || []).length,
          mark_lines: s.markLine && s.markLine.data ? s.markLine.data.length : 0,
          links: (s.links || []).length,
          ids: s.type === 'graph' ? s.data.map((n) => n.value) : undefined,
        })),
      };
    }
    return out;
  });
  result.page = await page.evaluate(() => ({
    title: document.title,
    scripts: document.querySelectorAll('script').length,
    images: document.querySelectorAll('img').length,
    sections: [...document.querySelectorAll('section h2')].map((h) => h.textContent),
  }));
  await page.screenshot({ path: `${outDir}/report-top.png` });
  result.clicks = [];
  for (const spec of clicks) {
    const [taskIndex, id] = spec.split(':').map(Number);
    // The node's place on the page, from the graph's own coordinates; brought to mid-screen, then clicked.
    const at = await page.evaluate(([index, wanted]) => {
      const box = document.getElementById('lineage-' + index);
      const chart = echarts.getInstanceByDom(box);
      const node = chart.getOption().series[0].data.find((n) => n.value === wanted);
      if (!node) return null;
      const [x, y] = chart.convertToPixel({ seriesIndex: 0 }, [node.x, node.y]);
      const r = box.getBoundingClientRect();
      window.scrollTo(0, window.scrollY + r.top + y - window.innerHeight / 2);
      const after = box.getBoundingClientRect();
      return { x: after.left + x, y: after.top + y };
    }, [taskIndex, id]);
    const click = { task_index: taskIndex, id, found: !!at };
    if (at) {
      await page.mouse.click(at.x, at.y);
      const pane = page.locator('#candidate-' + taskIndex);
      click.heading = await pane.locator('h4').textContent();
      click.candidate = await pane.locator('.candidate').getAttribute('data-candidate');
      click.diff = await pane.locator('[data-role=diff]').textContent();
      click.source = await pane.locator('[data-role=source]').textContent();
      click.diff_lines = await pane.locator('[data-role=diff] .add, [data-role=diff] .del').count();
      await pane.locator('details').last().evaluate((d) => { d.open = true; });
      await pane.screenshot({ path: `${outDir}/candidate-${id}.png` });
    }
    result.clicks.push(click);
  }
  await page.screenshot({ path: `${outDir}/report-full.png`, fullPage: true });
  result.after_clicks = { ...seen };
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
}
