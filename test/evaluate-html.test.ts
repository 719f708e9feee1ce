/**
 * `evaluate --html`: the report is one self-contained file (no script, nothing fetched) whose figures Chromium
 * draws: the task 1.2 confusion matrix, the per-group recall (with --narratives) and task 2's per-label F1.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { barChart, confusionChart, esc } from "../src/evaluation/html-report.ts";

const CHROMIUM = "/usr/bin/chromium";
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (apt-get install chromium)`;
const dir = mkdtempSync(join(tmpdir(), "cc-html-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { encoding: "utf8" });

function report(task: 1 | 2, ...extra: string[]): string {
  const out = join(dir, `task${task}.html`);
  const r = cli(
    "evaluate",
    "--task",
    String(task),
    "--predictions",
    `examples/task${task}-predictions.csv`,
    "--gold",
    "examples/labels.csv",
    "--html",
    out,
    ...extra,
  );
  assert.equal(r.status, 0, r.stderr);
  return out;
}

test("the confusion chart holds one cell per gold/predicted pair with its count; text is escaped", () => {
  const zero = { Supports: 0, Refutes: 0, "Not Enough Information": 0 };
  const svg = confusionChart({
    Supports: { ...zero, Supports: 3, Refutes: 1 },
    Refutes: { ...zero },
    "Not Enough Information": { ...zero, "Not Enough Information": 2 },
  });
  assert.equal(svg.match(/<rect class="cell"/g)?.length, 9);
  assert.match(svg, /data-gold="Supports" data-predicted="Refutes" data-count="1"/);
  assert.match(svg, /gold Supports, predicted Supports: 3 \(75\.0% of the gold row\)/);
  const bars = barChart("t", [{ label: "<b>&", values: [0.5, 2] }], ["a", "b"]);
  assert.ok(bars.includes(esc("<b>&")) && !bars.includes("<b>&"));
  // A value beyond 1 is drawn at full width, and written as it is.
  assert.match(bars, /width="460\.0" height="12" fill="#1b7f3b" data-value="2"/);
});

test("evaluate --html writes the tables and figures without a script or an outside reference", () => {
  const html = readFileSync(report(1, "--narratives", "examples/labels.csv"), "utf8");
  assert.doesNotMatch(html, /<script|<link|@import|url\(|src=/i);
  assert.match(html, /<figure class="figure" id="confusion"/);
  assert.match(html, /<figure class="figure" id="group-recall"/);
  assert.match(html, /<th scope="row">Recall@5<\/th><td class="n">1\.0000<\/td>/);
  const t2 = readFileSync(report(2), "utf8");
  assert.match(t2, /<figure class="figure" id="code-f1"/);
  assert.match(t2, /<figure class="figure" id="group-f1"/);
});

test("Chromium opens the report offline and draws its figures", { skip, timeout: 120_000 }, async () => {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    const t1 = pathToFileURL(report(1, "--narratives", "examples/labels.csv")).href;
    await page.goto(t1);
    assert.deepEqual(requests, [t1], "nothing but the file itself is loaded");
    for (const id of ["confusion", "group-recall"]) {
      const box = await page.locator(`#${id} svg`).boundingBox();
      assert.ok(box && box.width > 200 && box.height > 100, `${id} is drawn: ${JSON.stringify(box)}`);
    }
    assert.equal(await page.locator("#confusion rect.cell").count(), 9);
    // examples: gold Refutes predicted Refutes 3 times (see examples/README.md's run).
    assert.equal(
      await page
        .locator('#confusion rect.cell[data-gold="Refutes"][data-predicted="Refutes"]')
        .getAttribute("data-count"),
      "3",
    );
    // Five gold groups in the examples, three recall bars each.
    assert.equal(await page.locator("#group-recall rect.bar").count(), 15);
    await page.goto(pathToFileURL(report(2)).href);
    assert.ok((await page.locator("#code-f1 rect.bar").count()) >= 5);
    const widths = await page
      .locator("#code-f1 rect.bar")
      .evaluateAll((rects) =>
        rects.map((r) => (r as unknown as { getBBox(): { width: number } }).getBBox().width),
      );
    assert.ok(
      widths.some((w) => w > 100),
      `bars have width: ${widths}`,
    );
  } finally {
    await browser.close();
  }
});
