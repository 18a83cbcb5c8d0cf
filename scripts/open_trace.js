// Opens a scabench trace (run --trace) in a real trace viewer: the
// Performance panel of the DevTools that Chromium carries (its trace_app),
// driven headless through puppeteer-core. It prints what the viewer made of
// the file as one JSON line ({"range": "0 ms – 1.37 s"}: the span its
// summary shows once the trace is parsed) and, with a second argument,
// writes a screenshot with the first process's threads opened.
//
//   NODE_PATH=/path/to/node_modules node scripts/open_trace.js run.trace.json [shot.png]
//
// CHROMIUM names the browser (default /usr/bin/chromium). Exit 1 if the
// viewer did not take the file. docs/reference/trace.md says what was seen.
const puppeteer = require('puppeteer-core');

const [file, shot] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Text across the page's shadow roots (DevTools is made of web components).
function deepText() {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot);
      if (!el.children.length && el.textContent.trim()) out.push(el.textContent.trim());
    }
  };
  walk(document);
  return out;
}

async function clickCentre(page, handle) {
  const box = await handle.boundingBox();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
    defaultViewport: {width: 1800, height: 1600},
  });
  try {
    const page = await browser.newPage();
    await page.goto('devtools://devtools/bundled/trace_app.html', {waitUntil: 'load'});
    await sleep(2000);
    await page.keyboard.press('Escape'); // the "connection closed" notice: no page is being inspected
    for (const tab of await page.$$('pierce/[role="tab"]'))
      if (/Performance/.test(await tab.evaluate((e) => e.textContent))) await clickCentre(page, tab);
    const load = await page.waitForSelector('pierce/button[aria-label^="Load"]', {timeout: 15000});
    const [chooser] = await Promise.all([page.waitForFileChooser({timeout: 10000}), load.evaluate((e) => e.click())]);
    await chooser.accept([file]);
    // Parsed: the panel shows the trace's whole span ("Full range (1,365.29 ms)").
    let range = null;
    for (let i = 0; i < 60 && !range; ++i) {
      await sleep(500);
      const found = (await page.evaluate(deepText)).find((t) => /^Full range \(/.test(t));
      if (found) range = found.replace(/^Full range \((.*)\)$/, '$1');
    }
    await page.keyboard.press('Escape'); // the shortcuts' box the first load shows
    await sleep(1000);
    if (shot) await page.screenshot({path: shot});
    console.log(JSON.stringify({range}));
    process.exitCode = range ? 0 : 1;
  } finally {
    await browser.close();
  }
})();
