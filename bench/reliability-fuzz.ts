/**
 * `npm run fuzz`: the long fuzz run, FUZZ_CASES (default 100,000) cases per target of test/fuzz-targets.ts (each
 * reader and the HTTP API). Cases run in blocks of FUZZ_BLOCK (default 5,000), block b with seed 2025 + b, and each
 * finished block is saved under bench/out/reliability-fuzz/, so a run stopped part way loses at most one block per
 * target and the next run resumes. FUZZ_TARGETS (comma-separated parts of target names) runs only those targets
 * (several processes can then share the work); FUZZ_STOP_AT (an ISO time) starts no block after it. The section
 * reports every target from the saved blocks, and says so where a target has fewer than FUZZ_CASES. A failing
 * target is reported with fast-check's shrunk counterexample instead of stopping the run.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { createApp } from "../src/server/app.ts";
import { apiProperty, newTally, READER_TARGETS, readerProperty, type Tally } from "../test/fuzz-targets.ts";
import { testPipeline } from "../test/pipeline-fixtures.ts";
import { tempDir } from "../test/retrieval-fixtures.ts";
import { type Bench, loadAverage, table } from "./report.ts";

const SEED = 2025;
const CASES = Number(process.env.FUZZ_CASES ?? 100_000);
const BLOCK = Math.min(CASES, Number(process.env.FUZZ_BLOCK ?? 5_000));
const ONLY = process.env.FUZZ_TARGETS?.split(",").map((s) => s.trim().toLowerCase());
const STOP_AT = process.env.FUZZ_STOP_AT ? Date.parse(process.env.FUZZ_STOP_AT) : Number.POSITIVE_INFINITY;
const OUT = join("bench", "out", "reliability-fuzz");
const API = "HTTP API (in process)";

interface Block {
  tally: Tally;
  seconds: number;
  /** Empty when no case failed; else the failure and its shrunk counterexample. */
  failure: string;
  commit: string;
  finished: string;
}

/** The saved blocks of a target, by block number (only those of the current block size count). */
interface Saved {
  block: number;
  blocks: Record<string, Block>;
}

const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, "-");
const savedPath = (name: string) => join(OUT, `${slug(name)}.block-${BLOCK}.json`);

function load(name: string): Saved {
  const path = savedPath(name);
  if (existsSync(path)) {
    const saved = JSON.parse(readFileSync(path, "utf8")) as Saved;
    if (saved.block === BLOCK) return saved;
  }
  return { block: BLOCK, blocks: {} };
}

function save(name: string, saved: Saved): void {
  mkdirSync(OUT, { recursive: true });
  const path = savedPath(name);
  writeFileSync(`${path}.tmp`, JSON.stringify(saved, null, 1));
  renameSync(`${path}.tmp`, path);
}

/** The commit whose code this process loaded (blocks record it: the readers may change while a long run goes on). */
const COMMIT = commit();

function commit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

async function runBlock(
  property: fc.IAsyncProperty<[unknown]>,
  cases: number,
  seed: number,
): Promise<string> {
  const details = await fc.check(property, { numRuns: cases, seed, endOnFailure: false });
  if (!details.failed) return "";
  return `${String(details.errorInstance).split("\n")[0].slice(0, 200)} (seed ${seed}, counterexample ${fc.stringify(details.counterexample).slice(0, 120)})`.replace(
    /[\r\n|]/g,
    " ",
  );
}

type Target = { name: string; property: (tally: Tally) => fc.IAsyncProperty<[unknown]> };

/**
 * Runs the blocks the targets still lack, block 1 of each target, then block 2 of each, and so on (a run stopped
 * by FUZZ_STOP_AT leaves every target with about as many cases), saving each block as it finishes.
 */
async function runTargets(targets: Target[]): Promise<void> {
  const blocks = Math.ceil(CASES / BLOCK);
  for (let b = 0; b < blocks; b++) {
    for (const { name, property } of targets) {
      const saved = load(name);
      if (saved.blocks[b]) continue;
      if (Date.now() >= STOP_AT) {
        process.stderr.write(`fuzz: FUZZ_STOP_AT reached, block ${b + 1} of ${name} not started\n`);
        return;
      }
      const cases = Math.min(BLOCK, CASES - b * BLOCK);
      const tally = newTally();
      const started = performance.now();
      const failure = await runBlock(property(tally), cases, SEED + b);
      const seconds = (performance.now() - started) / 1000;
      saved.blocks[b] = { tally, seconds, failure, commit: COMMIT, finished: new Date().toISOString() };
      save(name, saved);
      process.stderr.write(
        `fuzz ${name}: block ${b + 1}/${blocks}, ${tally.cases} cases in ${seconds.toFixed(0)} s${failure ? `, FAILED: ${failure}` : ""}\n`,
      );
    }
  }
}

const wanted = (name: string) => !ONLY || ONLY.some((part) => name.toLowerCase().includes(part));

export const bench: Bench = async () => {
  const targets: Target[] = READER_TARGETS.filter((t) => wanted(t.name)).map((t) => ({
    name: t.name,
    property: (tally) => readerProperty(t, tempDir("cc-fuzz-"), tally) as never,
  }));
  const p = wanted(API) ? await testPipeline() : undefined;
  try {
    if (p)
      targets.push({
        name: API,
        property: (tally) => apiProperty(createApp(p.pipeline, { log: () => {} }), tally) as never,
      });
    await runTargets(targets);
  } finally {
    await p?.cleanup();
  }
  return report();
};

function report() {
  const pct = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(1)}%` : "-");
  const statuses: Record<string, number> = {};
  const commits = new Set<string>();
  const rows = [...READER_TARGETS.map((t) => t.name), API].map((name) => {
    const sum = newTally();
    let seconds = 0;
    const failures: string[] = [];
    const blocks = Object.values(load(name).blocks);
    // Shares of refusals naming a line and a field: of the blocks run with the newest reader code, since the
    // readers changed while the run went on; those of older code in brackets.
    const newest = blocks.reduce((a, b) => (b.finished > a.finished ? b : a), blocks[0])?.commit;
    const shares = (newer: boolean) => {
      const t = newTally();
      for (const b of blocks.filter((x) => (x.commit === newest) === newer)) {
        t.refused += b.tally.refused;
        t.withLine += b.tally.withLine;
        t.withField += b.tally.withField;
      }
      return t;
    };
    const now = shares(true);
    const old = shares(false);
    const share = (key: "withLine" | "withField") =>
      old.refused
        ? `${pct(now[key], now.refused)} (older code: ${pct(old[key], old.refused)})`
        : pct(now[key], now.refused);
    for (const b of blocks) {
      sum.cases += b.tally.cases;
      sum.accepted += b.tally.accepted;
      sum.refused += b.tally.refused;
      sum.withLine += b.tally.withLine;
      sum.withField += b.tally.withField;
      seconds += b.seconds;
      if (b.failure) failures.push(b.failure);
      commits.add(b.commit);
      if (name === API)
        for (const [s, n] of Object.entries(b.tally.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
    }
    const outcome = failures.length
      ? `FAILED in ${failures.length} block(s): ${failures[0]}`
      : sum.cases === 0
        ? "not run"
        : sum.cases < CASES
          ? `no crash, hang or 5xx; stopped at ${sum.cases.toLocaleString("en")} of ${CASES.toLocaleString("en")} (out of time), ${(sum.cases / seconds).toFixed(0)} cases/s`
          : "no crash, hang or 5xx";
    return [
      name,
      sum.cases,
      sum.accepted,
      sum.refused,
      share("withLine"),
      share("withField"),
      Math.round(seconds),
      outcome,
    ];
  });
  return {
    id: "reliability-fuzz",
    title: "Reliability: fuzzing the readers and the HTTP API (issue 25)",
    command: CASES === 100_000 ? "npm run fuzz" : `FUZZ_CASES=${CASES} npm run fuzz`,
    markdown: [
      `Up to ${CASES.toLocaleString("en")} cases per target in blocks of ${BLOCK.toLocaleString("en")} (block b: seed ${SEED} + b), fast-check 4.10.2 (inputs: test/fuzz-targets.ts: broken quoting, stray and invalid UTF-8 bytes, cut/spliced/duplicated bytes, damaged Parquet pages and metadata, fields up to 5,000 characters (API bodies up to 200,000), JSON nested up to 20,000 deep, unicode edge cases (BOM, NUL, lone surrogates, combining marks, bidi), numbers out of range). A reader case passes when it returns or refuses with a one-line DataError starting with the file's path; an API case when the status is below 500 and every error answer is JSON with an \`error\` text. Blocks were run at commit(s) ${[...commits].sort().join(", ")}, several targets at a time, niced, load average ${loadAverage()} at the end on ${cpus().length} cores (other jobs share the machine): seconds are of a busy machine.`,
      "",
      table(
        [
          "target",
          "cases",
          "accepted",
          "refused (DataError)",
          "refusals naming a line",
          "naming a field",
          "seconds",
          "outcome",
        ],
        rows,
      ),
      "",
      `HTTP statuses of the API cases: ${Object.entries(statuses)
        .map(([s, n]) => `${s}: ${n}`)
        .join(", ")}.`,
      "",
      "Refusals naming no field are file- or line-level: an empty file, a file that is not gzip or whose Parquet footer is unreadable, a JSON line that is not an object (or breaks outside any key); Parquet refusals name no line (they are about the file's layout, not a row), and name the column when a chunk or page is damaged.",
      "",
      "Found by this run and fixed: every reader that stopped at an error part way left its file open (one descriptor per failed read; the first run died of EMFILE after 20,000 corpus JSONL cases). Found while hunting the Parquet hang: a Parquet column chunk of a column missing from the schema made hyparquet's other chunk reads unhandled rejections, which end the process. Both have regression tests (test/data-formats.test.ts, test/parquet-damaged.test.ts). The hang check caught a 60 KB JSON Lines file taking over 10 s (the claims and corpus JSONL processes stalled in fast-check shrinking; reproduced at seed 2027, case 1044): the line of a bad UTF-8 byte was found by decoding every prefix of the chunk (quadratic), now a binary search (4.6 s to 0.1 s on that file); the blocks those processes were in were not saved, and the JSONL targets were rerun from there with the fix.",
    ].join("\n"),
  };
}
