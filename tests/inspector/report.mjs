// Opens a world report page (`geppetto simulate --world … --report FILE`, the first
// argument) in headless Chromium (playwright-core with Debian's /usr/bin/chromium), waits for
// its timelines to be drawn, screenshots it into the directory given as the second argument
// and prints what it saw as JSON. Exits non-zero on a script error in the page.
import { chromium } from "playwright-core";

const [file, shots] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 1400 } });
  const errors = [];
  page.on("pageerror", error => errors.push(String(error)));
  // A file loads nothing from the network: the page must be self-contained.
  const requests = [];
  page.on("request", request => { if (!request.url().startsWith("file:")) requests.push(request.url()); });
  await page.goto("file://" + file);
  await page.waitForSelector("section.timeline", { timeout: 30000 });
  if (errors.length) throw new Error("script errors: " + errors.join("; "));
  await page.screenshot({ path: `${shots}/report.png` });
  const seen = await page.evaluate(() => ({
    timelines: document.querySelectorAll("section.timeline").length,
    hours: document.querySelector("section.timeline .lane.activity").children.length,
    signals: document.querySelectorAll(".signals b").length,
    charts: [...document.querySelectorAll("section.timeline canvas")]
      .filter(c => Number(c.dataset.points) > 0).length,
    marks: document.querySelectorAll("#marks tr").length - 1,
    weeks: Math.max(0, document.querySelectorAll("#weeks tr").length - 1),
    sleepers: [...document.querySelectorAll("section.timeline .muted")]
      .filter(d => d.textContent.includes("asleep")).length,
  }));
  console.log(JSON.stringify({ ...seen, external_requests: requests.length }));
} finally {
  await browser.close();
}
