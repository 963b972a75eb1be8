// Drives the test host page in headless Chromium (the Debian package,
// through playwright-core; no browser download): waits for the view to
// show the tool's result, edits record 2 in the view and saves it (the
// view calls edit_record through the host), waits for the view to show
// the answer, takes a screenshot and prints what it saw as one JSON line.
//
//   node drive.mjs HOST_URL SCREENSHOT_PATH
//
// Environment: CHROMIUM, the browser (default /usr/bin/chromium).
import { chromium } from "playwright-core";

const [hostURL, screenshot] = process.argv.slice(2);
const wait = 20000; // every wait has its own bound, far beyond a passing run's
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  timeout: wait,
  // The machine has no network but loopback: nothing in the background.
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
const out = { console: [] };
try {
  const page = await browser.newPage({ viewport: { width: 900, height: 420 } });
  page.setDefaultTimeout(wait);
  page.on("console", (m) => { if (m.type() !== "debug") out.console.push(m.type() + ": " + m.text()); });
  page.on("pageerror", (e) => out.console.push("pageerror: " + e.message));
  await page.goto(hostURL);
  // The view is the srcdoc frame inside the sandbox proxy's frame.
  const deadline = Date.now() + wait;
  let view;
  while (!(view = page.frames().find((f) => f.url() === "about:srcdoc"))) {
    if (Date.now() > deadline) throw new Error("the view's frame never appeared; host state: " + JSON.stringify(await page.evaluate(() => window.hostState)));
    await page.waitForTimeout(50);
  }
  const rows = () => view.$$eval("#rows tr", (trs) => trs.map((tr) => ({ id: Number(tr.dataset.id), title: tr.querySelector("input").value, status: tr.children[2].textContent })));
  await view.waitForFunction(() => document.querySelectorAll("#rows tr").length > 0);
  out.before = await rows();
  out.statusBefore = await view.textContent("#status");
  await view.fill('input[aria-label="title of record 2"]', "Edited in Chromium");
  await view.click('#rows tr[data-id="2"] button');
  await view.waitForFunction(() => document.getElementById("status").textContent.startsWith("Saved") || document.getElementById("status").textContent.startsWith("Could not") || document.getElementById("status").textContent.startsWith("The server"));
  out.after = await rows();
  out.statusAfter = await view.textContent("#status");
  out.host = await page.evaluate(() => window.hostState);
  await page.screenshot({ path: screenshot, fullPage: true });
} catch (err) {
  out.error = String((err && err.stack) || err);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
