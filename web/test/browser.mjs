// Opens a report file in Debian's headless Chromium (playwright-core drives
// it; no browser is downloaded), recording console errors, page errors and
// dialogs. Shared by the report's browser test and the README's screenshot.
import { chromium } from 'playwright-core';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const chromiumPath = process.env.ACCELOPT_CHROMIUM || '/usr/bin/chromium';

export async function openReport(file, { width = 1400, height = 1000 } = {}) {
  if (!existsSync(chromiumPath)) throw new Error(`no Chromium at ${chromiumPath} (Debian's chromium; scripts/setup.sh installs it)`);
  // --no-sandbox: the tests may run as root, where Chromium's sandbox refuses to start.
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width, height } });
  const seen = { console_errors: [], page_errors: [], dialogs: [], requests: [] };
  page.on('console', (m) => { if (m.type() === 'error') seen.console_errors.push(m.text()); });
  page.on('pageerror', (e) => seen.page_errors.push(String(e)));
  page.on('dialog', async (d) => { seen.dialogs.push(`${d.type()}: ${d.message()}`); await d.dismiss(); });
  page.on('request', (r) => { if (!r.url().startsWith('file:')) seen.requests.push(r.url()); });
  // A file, or a page `accelopt serve` answers (http://127.0.0.1:PORT/runs/ID).
  await page.goto(/^https?:\/\//.test(file) ? file : pathToFileURL(file).href);
  await page.waitForFunction(() => window.accelopt && window.accelopt.page.data);
  // Two frames, so that every chart has painted.
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  return { browser, page, seen };
}
