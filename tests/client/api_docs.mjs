// Opens the API reference (GET /v0/docs) in headless Chromium (the Debian binary, driven by
// puppeteer-core from npm: no browser download) and reports what a reader would meet: console
// errors, requests that failed or went to another origin, policy violations, the operations
// rendered, and a screenshot for a person to look at.
//   node api_docs.mjs MODULES CHROMIUM URL SCREENSHOT   (prints the results as JSON)
import path from 'path';
import { pathToFileURL } from 'url';
import { createRequire } from 'module';

const [modules, chromium, url, screenshot] = process.argv.slice(2);
const req = createRequire(path.join(modules, 'x.js'));
const puppeteer = (await import(pathToFileURL(req.resolve('puppeteer-core')).href)).default;

const origin = new URL(url).origin;
const report = { console_errors: [], failed: [], elsewhere: [], violations: [], operations: {}, reasons: [] };
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 1000 });
  page.on('console', (m) => { if (m.type() === 'error') report.console_errors.push(m.text()); });
  page.on('pageerror', (e) => report.console_errors.push('page error: ' + e.message));
  page.on('requestfailed', (r) => report.failed.push(r.url() + ' ' + (r.failure() || {}).errorText));
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:')) report.elsewhere.push(u);
  });
  await page.evaluateOnNewDocument(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
  });
  const answer = await page.goto(url, { waitUntil: 'networkidle0', timeout: 60000 });
  report.status = answer.status();
  report.policy = answer.headers()['content-security-policy'] || '';
  // Redoc renders one section per operation, keyed by its operationId.
  await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 60000 });
  // Each operation's section: its id, and the scopes its text names (Redoc shows the security
  // requirement, `bearerAuth (content-lake.read)`).
  report.operations = await page.$$eval('div[data-section-id^="operation/"]', (els) => {
    const seen = {};
    for (const e of els) {
      const id = e.getAttribute('data-section-id').slice('operation/'.length);
      const scopes = e.innerText.match(/\b[a-z-]+\.(read|write)(\.[a-z]+)*\b/g) || [];
      seen[id] = [...new Set([...(seen[id] || []), ...scopes])];
    }
    return seen;
  });
  const text = await page.evaluate(() => document.body.innerText);
  report.reasons = [...new Set(text.match(/\b[A-Z][A-Z0-9_]{5,}\b/g) || [])];
  report.headers_named = ['Idempotency-Key', 'Content-Lake-Position', 'X-Usage-Purpose', 'Content-Usage', 'tdm-reservation']
    .filter((h) => text.includes(h));
  report.violations = await page.evaluate(() => window.__violations);
  await page.screenshot({ path: screenshot, fullPage: false });
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
