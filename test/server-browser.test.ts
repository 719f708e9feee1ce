/**
 * End to end in a real browser (Debian chromium driven by playwright-core): the page checks a claim, shows cards
 * with badges and highlighted rationale, keeps claim and abstract text as text, and fills itself from a permalink.
 * By default it runs on the small fixture pipeline; CLIMATECHECK_E2E_REAL=1 runs it on the real default index
 * (slow; how docs/screenshot-1280.png and docs/screenshot-390.png are made: CLIMATECHECK_SCREENSHOTS=docs).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { BUILTIN_CORPUS, REAL_CORPUS_HINT } from "../src/data/builtin-corpus.ts";
import { openPipeline, type Pipeline } from "../src/pipeline/pipeline.ts";
import { assess } from "../src/pipeline/summary.ts";
import { type RunningServer, startServer } from "../src/server/start.ts";
import { readableTitle } from "../src/text/tex.ts";
import { NEI } from "../src/types.ts";
import { testPipeline } from "./pipeline-fixtures.ts";
import { tempDir } from "./retrieval-fixtures.ts";

const CHROMIUM = "/usr/bin/chromium";
const REAL = process.env.CLIMATECHECK_E2E_REAL === "1";
const XSS = "<img src=x onerror=alert(1)>";
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (apt-get install chromium)`;

let server: RunningServer;
let context: BrowserContext;
let page: Page;
let cleanup = async () => {};
const dialogs: string[] = [];
const profile = tempDir("cc-chromium-");

/** A claim ending in this word gets a stub relevance gate that puts abstracts about the sun below the gate. */
const GATED = "(gated)";
/** Claims with these words get, from the fixture below: an error (500), no decisive verdict, a long abstract. */
const FAIL = "(fail)";
const UNSETTLED = "(unsettled)";
const MIXED = "(mixed)";
const LONG = "(long)";
const SOLAR = "Solar irradiance explains the warming since 1950";
/** Ten sentences; the verdict's rationale is the sixth (index 5). */
const LONG_ABSTRACT = Array.from({ length: 10 }, (_, i) =>
  i === 5
    ? "Changes in solar irradiance cannot explain warming since 1950."
    : `Filler sentence number ${i + 1}.`,
);

/** The fixture pipeline, except that a claim with markup gets an abstract sentence with markup too. */
async function fixture(): Promise<Pipeline> {
  const t = await testPipeline({
    relevance: {
      probabilities: async (claim, docs) =>
        docs.map((d) => (claim.endsWith(GATED) && d.sentences.some((x) => /\bsun\b/i.test(x)) ? 0.1 : 0.9)),
    },
  });
  cleanup = t.cleanup;
  return {
    ...t.pipeline,
    async check(claim, options) {
      if (claim.includes(FAIL)) throw new Error("the fixture fails this claim");
      if (claim.includes(UNSETTLED)) {
        // Every abstract about the claim says not enough: the summary's rules give "insufficient".
        const r = await t.pipeline.check(SOLAR, options);
        const evidence = r.evidence.map((e) => ({
          ...e,
          label: NEI,
          confidence: 0.6,
          rationale: [],
          rationale_indices: [],
        }));
        return { ...r, claim, evidence, ...assess(evidence, 0) };
      }
      if (claim.includes(MIXED)) {
        // A second abstract supports what the first refutes: mixed.
        const r = await t.pipeline.check(SOLAR, options);
        const evidence = r.evidence.map((e, i) =>
          i === 1
            ? {
                ...e,
                label: "Supports" as const,
                confidence: 0.7,
                p_supports: 0.7,
                p_refutes: 0.1,
                p_nei: 0.2,
              }
            : e,
        );
        return { ...r, claim, evidence, ...assess(evidence, 0) };
      }
      if (claim.includes(LONG)) {
        const r = await t.pipeline.check(SOLAR, options);
        Object.assign(r.evidence[0], {
          sentences: LONG_ABSTRACT,
          rationale: [LONG_ABSTRACT[5]],
          rationale_indices: [5],
        });
        return { ...r, claim };
      }
      if (claim.includes("$")) {
        // An arXiv-style title with TeX markup (made readable by the API), a DOI and an arXiv URL.
        const r = await t.pipeline.check(SOLAR, options);
        const raw = "Warming of $0.5^{\\circ}$C and $CO_2$ at L\\'evy {\\it in situ}";
        Object.assign(r.evidence[0], {
          title: readableTitle(raw),
          title_raw: raw,
          doi: "10.1/tex",
          url: "https://arxiv.org/abs/0000.00001",
        });
        return { ...r, claim };
      }
      if (!claim.includes("<")) return t.pipeline.check(claim, options);
      const r = await t.pipeline.check(SOLAR, options);
      r.evidence[0].sentences[0] = `<img src=y onerror=alert(2)> ${XSS}`;
      return { ...r, claim };
    },
  };
}

before(async () => {
  if (skip) return;
  const pipeline = REAL ? await openPipeline() : await fixture();
  if (REAL) cleanup = () => pipeline.close();
  server = await startServer(pipeline, { port: 0, log: () => {} });
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1100, height: 1400 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on("dialog", async (d) => {
    dialogs.push(d.message());
    await d.dismiss();
  });
});

after(async () => {
  await context?.close();
  await server?.close();
  await cleanup();
  await rm(profile, { recursive: true, force: true });
});

// The slice of the DOM the waits read (this file is typed without the DOM library).
type PageDocument = {
  getElementById(id: string): { textContent: string | null; hidden: boolean } | null;
};

/** Waits until the result is shown, for `claim` when given. A function, not a string: Playwright
 * evaluates a string predicate again on every poll, which the page's CSP (no 'unsafe-eval') blocks. */
async function waitForResult(claim?: string): Promise<void> {
  await page.waitForFunction(
    (expected) => {
      const doc = (globalThis as unknown as { document: PageDocument }).document;
      const shown = doc.getElementById("result")?.hidden === false;
      return shown && (expected === null || doc.getElementById("claim-echo")?.textContent === expected);
    },
    claim ?? null,
    { timeout: REAL ? 120_000 : 30_000 },
  );
}

async function checkClaim(claim: string): Promise<void> {
  await page.fill("#claim", claim);
  await page.click("#submit");
  await waitForResult(claim);
}

test("typing a claim shows the verdict first, then cards with label badges and highlighted rationale", {
  skip,
  timeout: 180_000,
}, async () => {
  await page.goto(server.url);
  const claim = REAL ? "The sun is causing global warming, not CO2." : SOLAR;
  await checkClaim(claim);
  const cards = page.locator("#evidence > li.card");
  // The fixture's BM25 index matches 5 abstracts for this claim ("warming" also stems to a7's "warmer"); the real
  // index always fills k = 5.
  assert.equal(await cards.count(), 5);
  const badges = await page.locator("#evidence .badge").allTextContents();
  assert.equal(badges.length, await cards.count());
  for (const b of badges)
    assert.match(b, /^((Supports|Refutes) \d+%|Not Enough Information|About something else)$/);
  // The verdict is one sentence: the lean, then its reason.
  assert.match(
    (await page.locator("#verdict").textContent()) ?? "",
    /^(Leans towards (supporting|refuting) the claim|Mixed evidence|Not settled|Out of scope): .+\.$/,
  );
  if (!REAL) {
    const first = cards.first();
    assert.equal(await first.getAttribute("data-abstract-id"), "a3");
    assert.equal(await first.locator(".badge").textContent(), "Refutes 80%");
    assert.match((await first.locator(".badge").getAttribute("class")) ?? "", /\brefutes\b/);
    assert.deepEqual(await first.locator(".excerpt mark.rationale").allTextContents(), [
      "Changes in solar irradiance cannot explain warming since 1950.",
    ]);
    assert.equal(await first.locator(".card-title").getAttribute("href"), "https://doi.org/10.1/a3");
    const colour = await first
      .locator(".badge")
      .evaluate(
        (b) =>
          (
            globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }
          ).getComputedStyle(b).backgroundColor,
      );
    assert.equal(colour, "rgb(179, 38, 30)", "Refutes badges are red");
    assert.equal(
      await page.locator("#narratives .chip .name").first().textContent(),
      "No contrarian narrative",
    );
    // One side alone: the lean, its reason and its number (the mean confidence of that side's verdicts).
    assert.equal(
      await page.locator("#verdict").textContent(),
      "Leans towards refuting the claim: of the 5 abstracts about this claim, 1 refutes it and none supports it (mean confidence 80%).",
    );
    assert.equal(await cards.nth(1).locator(".badge").textContent(), "Not Enough Information");
    assert.match((await first.locator(".meta").textContent()) ?? "", /S 10% · R 80% · NEI 10%/);
  }
  assert.match((await page.locator("#caution").textContent()) ?? "", /human review|No caution/);
  assert.equal(new URL(page.url()).searchParams.get("claim"), claim, "the address is the permalink");
  // The README's screenshots (docs/screenshot-1280.png and -390.png) come from here with CLIMATECHECK_E2E_REAL=1
  // CLIMATECHECK_SCREENSHOTS=docs; otherwise they go to a temp folder.
  const shots = process.env.CLIMATECHECK_SCREENSHOTS ?? profile;
  await mkdir(shots, { recursive: true });
  try {
    for (const width of [1280, 390]) {
      // The phone's whole page is several screens long: its first 1,500 px show the form, verdict and first card.
      await page.setViewportSize({ width, height: width === 390 ? 1500 : 900 });
      const shot = join(shots, `screenshot-${width}.png`);
      if (width === 390)
        await page.evaluate(() => {
          const doc = (
            globalThis as unknown as {
              document: { getElementById(id: string): { scrollIntoView(): void } | null };
            }
          ).document;
          doc.getElementById("status")?.scrollIntoView();
        });
      await page.screenshot({ path: shot, fullPage: width !== 390 });
      assert.ok(existsSync(shot));
    }
  } finally {
    await page.setViewportSize({ width: 1100, height: 1400 });
  }
});

test("a claim and an abstract with markup are shown as text: no img element, no script run", {
  skip,
  timeout: 120_000,
}, async () => {
  await page.goto(server.url);
  await checkClaim(XSS);
  assert.equal(await page.locator("#claim-echo").textContent(), XSS);
  assert.equal(await page.locator("img").count(), 0);
  if (!REAL) {
    const first = (await page.locator("#evidence > li.card").first().locator(".excerpt").textContent()) ?? "";
    assert.ok(first.startsWith("<img src=y onerror=alert(2)>"), first);
  }
  await page.waitForTimeout(200);
  assert.deepEqual(dialogs, []);
});

test("a permalink fills the claim box and runs the check", { skip, timeout: 120_000 }, async () => {
  const claim = REAL
    ? "Arctic sea ice has been growing since 2012."
    : "Sea level rise from thermal expansion";
  await page.goto(`${server.url}/?claim=${encodeURIComponent(claim)}`);
  await page.waitForSelector("#evidence > li.card", { timeout: REAL ? 120_000 : 30_000 });
  assert.equal(await page.inputValue("#claim"), claim);
  assert.equal(await page.locator("#claim-echo").textContent(), claim);
  if (!REAL)
    assert.equal(await page.locator("#evidence > li.card").first().getAttribute("data-abstract-id"), "a2");
});

test("results are announced (aria-live) without repeating the verdict, and focused; Ctrl+Enter submits", {
  skip,
  timeout: 120_000,
}, async () => {
  await page.goto(server.url);
  const claim = REAL ? "Sea level rise is accelerating." : "Sea level rise from thermal expansion";
  await page.selectOption("#k", "3");
  await page.fill("#claim", claim);
  await page.press("#claim", "Control+Enter");
  await waitForResult();
  const live = page.locator("#status");
  assert.equal(await live.getAttribute("aria-live"), "polite");
  const said = (await live.textContent()) ?? "";
  assert.match(said, /^Checked against \d+ abstracts?\.$/);
  // Focus lands on the result, which is labelled by the verdict sentence: a screen reader says it once.
  assert.equal(await page.evaluate(`document.activeElement && document.activeElement.id`), "result");
  assert.equal(await page.locator("#result").getAttribute("aria-labelledby"), "verdict");
  const verdict = (await page.locator("#verdict").textContent()) ?? "";
  assert.ok(!said.includes(verdict) && !verdict.includes(said), "status and verdict say different things");
  const url = new URL(page.url());
  assert.deepEqual([url.searchParams.get("claim"), url.searchParams.get("k")], [claim, "3"]);
  assert.ok((await page.locator("#evidence > li.card").count()) <= 3);

  // Opening the permalink restores k (also a k the menu lacks) and runs the check with it.
  await page.goto(`${server.url}/?claim=${encodeURIComponent(claim)}&k=2`);
  await page.waitForSelector("#evidence > li.card", { timeout: REAL ? 120_000 : 30_000 });
  assert.equal(await page.inputValue("#k"), "2");
  assert.equal(await page.locator("#evidence > li.card").count(), 2);
  assert.equal(new URL(page.url()).searchParams.get("k"), "2");
});

test("the page names the corpus, has a favicon, and shows the API's readable titles, linked to the DOI", {
  skip,
  timeout: 120_000,
}, async () => {
  await page.goto(server.url);
  await page.waitForSelector("#corpus:not([hidden])");
  assert.match(
    (await page.locator("#corpus").textContent()) ?? "",
    REAL ? /Searching [\d,]+ abstracts/ : /^Searching 8 abstracts: corpus\.jsonl\.$/,
  );
  assert.equal(await page.locator('link[rel="icon"]').getAttribute("href"), "/favicon.svg");
  const icon = await page.request.get(`${server.url}/favicon.svg`);
  assert.equal(icon.status(), 200);
  assert.match(icon.headers()["content-type"] ?? "", /image\/svg\+xml/);
  if (REAL) return;
  await checkClaim("A claim with $TeX$");
  const title = page.locator("#evidence > li.card").first().locator(".card-title");
  assert.equal(await title.textContent(), "Warming of 0.5°C and CO₂ at Lévy in situ");
  assert.equal(await title.getAttribute("href"), "https://doi.org/10.1/tex");
  const source = page.locator("#evidence > li.card").first().locator(".meta a.source-link");
  assert.equal(await source.getAttribute("href"), "https://arxiv.org/abs/0000.00001");
});

test("relevance is shown in words: 'about this claim' / 'about something else', and why", {
  skip: skip || (REAL ? "fixture only" : false),
  timeout: 120_000,
}, async () => {
  await page.goto(server.url);
  await checkClaim(`${SOLAR} ${GATED}`);
  // The retriever's first abstract is off-subject: abstracts about the claim are listed before it.
  const cards = page.locator("#evidence > li.card");
  const ids = await cards.evaluateAll((els) => els.map((e) => e.getAttribute("data-abstract-id")));
  assert.equal(ids.at(-1), "a3");
  const first = page.locator('#evidence > li.card[data-abstract-id="a3"]');
  assert.equal(await first.locator(".badge").textContent(), "About something else");
  assert.match((await first.getAttribute("class")) ?? "", /\boff\b/);
  assert.match((await first.locator(".why").textContent()) ?? "", /about something else .* takes no side/);
  const meta = (await first.locator(".meta").textContent()) ?? "";
  assert.match(meta, /about something else · S 1% · R 8% · NEI 91%/);
  assert.doesNotMatch(meta, /about the claim \d+%/, "relevance is not a bare percentage");
  assert.match((await cards.first().locator(".meta").textContent()) ?? "", /about this claim/);
});

/** The verdict, the lean's own text and whether any percentage is shown in the verdict. */
async function verdictParts(): Promise<{ text: string; lean: string; transform: string }> {
  const v = page.locator("#verdict");
  const lean = v.locator(".lean");
  const transform = await lean.evaluate(
    (b) =>
      (globalThis as unknown as { getComputedStyle(e: unknown): { textTransform: string } }).getComputedStyle(
        b,
      ).textTransform,
  );
  return { text: (await v.textContent()) ?? "", lean: (await lean.textContent()) ?? "", transform };
}

test("an out-of-scope claim: said once, in sentence case, with no percentage and no narratives", {
  skip: skip || (REAL ? "fixture only" : false),
  timeout: 120_000,
}, async () => {
  await page.goto(server.url);
  await checkClaim("El nivel del mar está subiendo más rápido que nunca");
  const v = await verdictParts();
  assert.equal(v.lean, "Out of scope");
  assert.equal(v.transform, "none", "not title case");
  assert.match(v.text, /^Out of scope: This claim does not look like English/);
  assert.doesNotMatch(v.text, /%/);
  assert.equal(
    await page.locator("#narratives .gate").textContent(),
    "Disinformation narratives: not assessed",
  );
  assert.equal(await page.locator("#narratives .chip").count(), 0);
  // The scope reason is the verdict's: the caution does not say it again.
  const body = (await page.locator("#result").textContent()) ?? "";
  assert.equal(body.split("does not look like English").length - 1, 1, body);
  assert.match((await page.locator("#caution").textContent()) ?? "", /^Needs human review/);
});

test("an insufficient result says 'Not settled' and why, with no percentage", {
  skip: skip || (REAL ? "fixture only" : false),
  timeout: 120_000,
}, async () => {
  await page.goto(server.url);
  await checkClaim(`${SOLAR} ${UNSETTLED}`);
  const v = await verdictParts();
  assert.equal(v.lean, "Not settled");
  assert.equal(v.text, "Not settled: none of the 5 abstracts about this claim supports or refutes it.");
  assert.doesNotMatch((await page.locator("#result").textContent()) ?? "", /\(0%\)|\b0%/);
});

test("mixed evidence says so, with the counts of both sides and no percentage", {
  skip: skip || (REAL ? "fixture only" : false),
  timeout: 120_000,
}, async () => {
  await page.goto(server.url);
  await checkClaim(`${SOLAR} ${MIXED}`);
  const v = await verdictParts();
  assert.equal(v.lean, "Mixed evidence");
  assert.equal(
    v.text,
    "Mixed evidence: of the 5 abstracts about this claim, 1 supports it and 1 refutes it.",
  );
  assert.match((await page.locator("#caution").textContent()) ?? "", /^Needs human review: .*disagree/);
});

test("each card shows its deciding sentence with context; the rest is folded, opened by a click or a key", {
  skip: skip || (REAL ? "fixture only" : false),
  timeout: 120_000,
}, async () => {
  await page.goto(server.url);
  await checkClaim(`${SOLAR} ${LONG}`);
  const card = page.locator("#evidence > li.card").first();
  const excerpt = card.locator(".excerpt");
  // The rationale (sentence 6) after the sentence before it, and the gaps marked.
  assert.equal(
    await excerpt.textContent(),
    "… Filler sentence number 5. Changes in solar irradiance cannot explain warming since 1950. …",
  );
  const full = card.locator("details.full");
  assert.equal(await full.getAttribute("open"), null, "folded at first");
  assert.equal(await card.locator(".abstract").isVisible(), false);
  assert.equal(await card.locator("details.full > summary").textContent(), "Whole abstract (10 sentences)");
  await card.locator("details.full > summary").click();
  assert.equal(await card.locator(".abstract").isVisible(), true);
  assert.equal(await excerpt.isVisible(), false, "opened, the excerpt gives way to the whole abstract");
  assert.equal(await card.locator(".abstract .sentence, .abstract mark").count(), 10);
  assert.deepEqual(await card.locator(".abstract mark.rationale").allTextContents(), [LONG_ABSTRACT[5]]);
  // The keyboard folds it again (the summary is a native button: Enter toggles).
  await card.locator("details.full > summary").focus();
  await page.keyboard.press("Enter");
  assert.equal(await full.getAttribute("open"), null);
  assert.equal(await excerpt.isVisible(), true);
  // A short abstract (every sentence already shown) has nothing to fold.
  const second = page.locator("#evidence > li.card").nth(1);
  const n = await second.locator(".excerpt .sentence, .excerpt mark").count();
  if ((await second.locator("details.full").count()) === 0) assert.ok(n >= 1);
});

test("a failed request clears the previous result instead of leaving it beside the new claim", {
  skip: skip || (REAL ? "fixture only" : false),
  timeout: 120_000,
}, async () => {
  await page.goto(server.url);
  await checkClaim(SOLAR);
  assert.equal(await page.locator("#evidence > li.card").count(), 5);
  await page.fill("#claim", `Another claim ${FAIL}`);
  await page.click("#submit");
  await page.waitForFunction(
    () =>
      (
        globalThis as unknown as { document: { getElementById(id: string): { className: string } | null } }
      ).document.getElementById("status")?.className === "error",
    null,
    { timeout: 30_000 },
  );
  assert.match(
    (await page.locator("#status").textContent()) ?? "",
    /^Could not check the claim: internal error$/,
  );
  assert.equal(await page.locator("#result").isHidden(), true);
  assert.equal(await page.locator("#evidence > li.card").count(), 0);
  assert.equal(await page.locator("#claim-echo").textContent(), "");
  assert.equal(await page.locator("#permalink").isHidden(), true);
});

/** Page width beyond the viewport (0 when nothing overflows) and the widest element's description. */
async function overflow(): Promise<{ extra: number; widest: string }> {
  return page.evaluate(() => {
    const doc = (
      globalThis as unknown as {
        document: {
          documentElement: { scrollWidth: number; clientWidth: number };
          querySelectorAll(
            s: string,
          ): ArrayLike<{ getBoundingClientRect(): { right: number }; tagName: string; className: string }>;
        };
      }
    ).document;
    const width = doc.documentElement.clientWidth;
    let widest = "";
    let right = 0;
    for (const e of Array.from(doc.querySelectorAll("body *"))) {
      const r = e.getBoundingClientRect().right;
      if (r > right) {
        right = r;
        widest = `${e.tagName}.${e.className}`;
      }
    }
    return { extra: Math.max(0, doc.documentElement.scrollWidth - width, Math.ceil(right - width)), widest };
  });
}

test("nothing overflows at 320, 390 and 1280 px, with the demo-corpus note, long ids and a long claim", {
  skip: skip || (REAL ? "fixture only" : false),
  timeout: 120_000,
}, async () => {
  // The built-in corpus's note (its commands and long path) as /healthz gives it for the demo corpus.
  const healthz = async (route: { fulfill(r: { json: unknown }): Promise<void> }) =>
    route.fulfill({
      json: {
        corpus: {
          name: BUILTIN_CORPUS.name,
          abstracts: BUILTIN_CORPUS.abstracts,
          builtin: true,
          note: REAL_CORPUS_HINT,
        },
      },
    });
  await page.route("**/healthz", healthz);
  try {
    for (const width of [320, 390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(server.url);
      await page.waitForSelector("#corpus-note");
      await page.locator("#corpus-note > summary").click();
      await checkClaim(`${SOLAR} ${LONG} ${"x".repeat(120)}`);
      await page.locator("#evidence details.full > summary").first().click();
      const o = await overflow();
      assert.equal(o.extra, 0, `${width} px: ${o.extra} px too wide (${o.widest})`);
    }
  } finally {
    await page.unroute("**/healthz", healthz);
    await page.setViewportSize({ width: 1100, height: 1400 });
  }
});
