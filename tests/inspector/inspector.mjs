// Drives the geppetto inspector of a running demo in headless Chromium (playwright-core with
// Debian's /usr/bin/chromium): the NPC list, one NPC's page with its breakdown and a chart with
// data points, the LLM spend per NPC-hour, and a story signal arriving live. Screenshots go to
// the directory given as the second argument. Exits non-zero with a message on the first expectation that fails.
import { chromium } from "playwright-core";

const [base, shots] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(base + "/inspector");
  // The NPC list fills from GET /npcs.
  await page.waitForSelector("tr.npc[data-npc='bjorn']", { timeout: 30000 });
  const rows = await page.locator("tr.npc").count();
  if (rows < 10) throw new Error(`expected the village's NPCs, saw ${rows} rows`);
  // One NPC: needs, candidates with every factor, and the utility chart with data points.
  await page.click("tr.npc[data-npc='bjorn']");
  await page.waitForFunction(() => document.getElementById("npc-title").textContent.includes("bjorn"),
                             null, { timeout: 30000 });
  await page.waitForSelector("#needs .need", { timeout: 30000 });
  await page.waitForSelector("#candidates tr.candidate td:nth-child(8)", { timeout: 30000 });
  await page.waitForFunction(
    () => Number(document.getElementById("utility-chart").dataset.points) > 0,
    null, { timeout: 60000 });
  await page.waitForFunction(
    () => Number(document.getElementById("needs-chart").dataset.points) > 3,
    null, { timeout: 60000 });
  await page.waitForFunction(
    () => Number(document.getElementById("candidates-chart").dataset.points) > 3,
    null, { timeout: 60000 });
  // Every need's response curve is drawn over its range; the smith's feelings (affect states)
  // have bars.
  await page.waitForSelector("#curves canvas.curve[data-points='21']", { timeout: 30000 });
  await page.waitForSelector("#feelings .feeling", { timeout: 30000 });
  // The LLM spend since start, per hour and per NPC-hour over the village's NPCs.
  await page.waitForFunction(n => Number(document.getElementById("llm-spend").dataset.npcs) === n,
                             rows, { timeout: 30000 });
  const spend = await page.textContent("#llm-spend .per-npc-hour");
  if (!/^per NPC-hour: \d+\.\d\d tokens, \d+\.\d{8} \(\d+ NPCs\)$/.test(spend))
    throw new Error("no LLM spend per NPC-hour: " + spend);
  const moods = await page.locator("tr.npc td:nth-child(4)").allTextContents();
  if (!moods.some(m => /^-?\d\.\d\d$/.test(m))) throw new Error("no mood in the NPC list: " + moods);
  // A story signal arrives over Server-Sent Events.
  await page.waitForSelector("#signals .signal", { timeout: 90000 });
  await page.screenshot({ path: `${shots}/inspector.png` });
  // What if Bjorn were exhausted? The replay shows where his timeline parts from the record.
  await page.fill("#whatif-changes", "need.COMFORT=0.02");
  await page.fill("#admin-token", process.env.GEPPETTO_ADMIN_TOKEN);
  await page.click("#whatif-run");
  await page.waitForSelector("#whatif-result tr.divergence", { timeout: 120000 });
  const divergence = await page.textContent("#whatif-status");
  await page.locator("#whatif-result").scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${shots}/whatif.png` });
  // A guard carries a reactive set: each of its considerations' curves is drawn too.
  await page.click("tr.npc[data-npc='roderick']");
  await page.waitForSelector("#set-curves canvas.curve[data-points='21']", { timeout: 30000 });
  const points = await page.getAttribute("#utility-chart", "data-points");
  const signals = await page.locator("#signals .signal").count();
  console.log(JSON.stringify({ rows, points: Number(points), signals, divergence }));
} finally {
  await browser.close();
}
