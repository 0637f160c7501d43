// node test/screenshot.mjs REPORT.html OUT.png [HEIGHT]
// The top of a report (HEIGHT pixels, 2400 by default) as a PNG: the README's picture.
import { openReport } from './browser.mjs';

const [file, out, height = '2400'] = process.argv.slice(2);
if (!file || !out) {
  console.error('usage: node test/screenshot.mjs REPORT.html OUT.png [HEIGHT]');
  process.exit(2);
}
const { browser, page, seen } = await openReport(file);
try {
  const full = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.screenshot({ path: out, fullPage: true, clip: { x: 0, y: 0, width: 1400, height: Math.min(full, Number(height)) } });
  for (const error of [...seen.console_errors, ...seen.page_errors]) console.error(`page error: ${error}`);
  console.log(out);
} finally {
  await browser.close();
}
