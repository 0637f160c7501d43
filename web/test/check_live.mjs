// node test/check_live.mjs URL SECONDS [OUT_DIR]
// Opens a run's live page that `accelopt serve` answers, reads its status
// line every 250 ms until it has shown four different lines or SECONDS have
// passed, takes a screenshot into OUT_DIR, and prints one JSON object:
// console and page errors, dialogs, requests to other origins, and the
// status lines in the order they were shown.
import { mkdirSync } from 'node:fs';
import { openReport } from './browser.mjs';

const [url, seconds, outDir] = process.argv.slice(2);
if (!url || !seconds) {
  console.error('usage: node test/check_live.mjs URL SECONDS [OUT_DIR]');
  process.exit(2);
}
const { browser, page, seen } = await openReport(url);
const lines = [];
try {
  const end = Date.now() + Number(seconds) * 1000;
  while (Date.now() < end && lines.filter(Boolean).length < 4) {
    const text = await page.evaluate(() => {
      const s = document.getElementById('status-line');
      return s && !s.hidden ? s.textContent : '';
    });
    if (lines.length === 0 || lines[lines.length - 1] !== text) lines.push(text);
    await new Promise((done) => setTimeout(done, 250));
  }
  if (outDir) {
    mkdirSync(outDir, { recursive: true });
    await page.screenshot({ path: `${outDir}/serve-live.png` });
  }
} finally {
  await browser.close();
}
const origin = new URL(url).origin;
console.log(JSON.stringify({ ...seen, requests: seen.requests.filter((u) => !u.startsWith(origin)), status_lines: lines }));
