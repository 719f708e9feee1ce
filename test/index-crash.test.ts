/**
 * Crash safety of ingest: a child ingest is killed with SIGKILL at seeded crash points spread over every phase
 * (commits, BM25 files, offsets, IVF lists, manifest); after each kill the index opens as the last complete one or
 * refuses with a clear error, and a rerun gives an index equal to an uninterrupted one (same content fingerprint,
 * same top 10 for a fixed claim set). Also: a torn or truncated file of a complete index stops open.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { gunzipSync } from "node:zlib";
import { BUILTIN_CORPUS } from "../src/data/builtin-corpus.ts";
import { DataError } from "../src/data/errors.ts";
import { openIndex } from "../src/index/open.ts";
import { FILES, type Manifest } from "../src/index/schema.ts";
import { mulberry32 } from "../src/learning/random.ts";
import { CRASH_INGEST, crashIngest } from "./ingest-child.ts";
import { hashedVector, tempDir } from "./retrieval-fixtures.ts";

const SEED = 2025;
const CLAIMS = [
  "Arctic sea ice is declining faster than models predicted",
  "The sun is the main driver of recent global warming",
  "Sea level rise is accelerating",
  "Carbon dioxide is plant food and harmless",
  "Climate models overestimate warming",
  "Extreme precipitation increases with warming",
  "Aerosols cool the climate",
  "Permafrost thaw releases methane",
  "Ocean heat content keeps rising",
  "Renewable energy cannot replace fossil fuels",
];

/** What must be equal between an interrupted-then-rerun index and an uninterrupted one. */
function answers(dir: string): { fingerprint: string; top: string[][] } {
  const index = openIndex(dir);
  try {
    const m: Manifest = index.manifest;
    const content = {
      files: m.files,
      committed: m.committed,
      vectors: m.vectors,
      bm25: m.bm25,
      sources: m.sources.map((s) => s.fingerprint),
    };
    const fingerprint = createHash("sha256").update(JSON.stringify(content)).digest("hex");
    const top = CLAIMS.flatMap((c) => [
      index.bm25.search(index.bm25.queryTerms(c), 10).map((h) => index.docs.id(h.docno)),
      index.vectors.fake.search(hashedVector(c, CRASH_INGEST.dim), 10).map((h) => index.docs.id(h.docno)),
    ]);
    return { fingerprint, top };
  } finally {
    index.close();
  }
}

function child(corpus: string, dir: string, env: Record<string, string>) {
  return spawnSync(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, "ingest-child.ts"), corpus, dir],
    {
      env: { ...process.env, ...env },
      encoding: "utf8",
    },
  );
}

/** The crash points an uninterrupted ingest passes, in order (1-based numbers, labels). */
function tracePoints(corpus: string, dir: string): string[] {
  const r = child(corpus, dir, { CLIMATECHECK_KILL_TRACE: "1" });
  assert.equal(r.status, 0, r.stderr);
  return [...r.stderr.matchAll(/^crash point \d+ (.*)$/gm)].map((m) => m[1]);
}

/** `count` point numbers chosen with the seed, at least one in each phase (the label before ":"). */
function choose(labels: string[], count: number, seed: number): number[] {
  const rng = mulberry32(seed);
  const phases = new Map<string, number[]>();
  labels.forEach((l, i) => {
    const phase = l.split(":")[0];
    phases.set(phase, [...(phases.get(phase) ?? []), i + 1]);
  });
  const picked = new Set<number>();
  for (const points of phases.values()) picked.add(points[Math.floor(rng() * points.length)]);
  while (picked.size < Math.min(count, labels.length)) picked.add(1 + Math.floor(rng() * labels.length));
  return [...picked].sort((a, b) => a - b);
}

test("ingest killed with SIGKILL at 24 seeded points over all phases: never readable and wrong, rerun equals uninterrupted", async () => {
  const root = tempDir("cc-crash-");
  const rows = gunzipSync(readFileSync(BUILTIN_CORPUS.path)).toString("utf8").split("\n").filter(Boolean);
  const corpusA = join(root, "a.jsonl");
  const corpusB = join(root, "b.jsonl");
  writeFileSync(corpusA, `${rows.slice(0, 160).join("\n")}\n`);
  writeFileSync(corpusB, `${rows.slice(0, 260).join("\n")}\n`);

  // References: B from scratch; A alone (the last complete index of the extend case); A then B.
  await crashIngest(corpusB, join(root, "ref-fresh"));
  await crashIngest(corpusA, join(root, "ref-a"));
  cpSync(join(root, "ref-a"), join(root, "ref-extend"), { recursive: true });
  await crashIngest(corpusB, join(root, "ref-extend"));
  const ref = {
    fresh: answers(join(root, "ref-fresh")),
    a: answers(join(root, "ref-a")),
    extend: answers(join(root, "ref-extend")),
  };
  assert.notEqual(ref.a.fingerprint, ref.extend.fingerprint);

  const start = (scenario: "fresh" | "extend", dir: string) => {
    if (scenario === "extend") cpSync(join(root, "ref-a"), dir, { recursive: true });
    else mkdirSync(dir);
  };
  const labels = {
    fresh: tracePoints(corpusB, join(root, "trace-fresh")),
    extend: (() => {
      start("extend", join(root, "trace-extend"));
      return tracePoints(corpusB, join(root, "trace-extend"));
    })(),
  };
  for (const l of Object.values(labels)) {
    for (const phase of ["read", "write", "finalise", "ivf", "manifest", "complete"])
      assert.ok(
        l.some((x) => x.startsWith(`${phase}:`)),
        `no crash point in phase ${phase}`,
      );
  }

  const seen = { refused: 0, opened: 0 };
  for (const scenario of ["fresh", "extend"] as const) {
    for (const at of choose(labels[scenario], 12, SEED + scenario.length)) {
      const dir = join(root, `${scenario}-${at}`);
      start(scenario, dir);
      const r = child(corpusB, dir, { CLIMATECHECK_KILL_AT: String(at) });
      const where = `${scenario} at ${at} (${labels[scenario][at - 1]})`;
      assert.equal(r.signal, "SIGKILL", `${where}: not killed: ${r.stderr}`);
      let state: { fingerprint: string; top: string[][] } | undefined;
      try {
        state = answers(dir);
      } catch (e) {
        assert.ok(e instanceof DataError, `${where}: ${e}`);
        assert.match(e.message, /did not finish|not an index/, where);
        seen.refused++;
      }
      if (state) {
        // Readable only as a complete index: the one before this ingest, or the one it finished.
        const allowed = scenario === "fresh" ? [ref.fresh] : [ref.a, ref.extend];
        assert.ok(
          allowed.some((x) => x.fingerprint === state.fingerprint),
          `${where}: opened as an index that is not a complete one`,
        );
        assert.deepEqual(
          state,
          allowed.find((x) => x.fingerprint === state.fingerprint),
          where,
        );
        seen.opened++;
      }
      await crashIngest(corpusB, dir);
      assert.deepEqual(
        answers(dir),
        ref[scenario],
        `${where}: the rerun differs from an uninterrupted ingest`,
      );
    }
  }
  assert.ok(seen.refused > 0, "no kill left an unfinished index");
});

test("a torn, truncated or damaged file of a complete index stops open with a clear error", async () => {
  const root = tempDir("cc-torn-");
  const rows = gunzipSync(readFileSync(BUILTIN_CORPUS.path)).toString("utf8").split("\n").filter(Boolean);
  const corpus = join(root, "c.jsonl");
  writeFileSync(corpus, `${rows.slice(0, 120).join("\n")}\n`);
  await crashIngest(corpus, join(root, "ref"));
  const files = [
    FILES.docs,
    FILES.offsets,
    FILES.ids,
    FILES.terms,
    FILES.postings,
    FILES.lengths,
    FILES.vectors("fake"),
    FILES.ivf("fake"),
  ];
  for (const [i, name] of files.entries()) {
    for (const damage of ["truncate", "flip"] as const) {
      const dir = join(root, `${damage}-${i}`);
      cpSync(join(root, "ref"), dir, { recursive: true });
      const path = join(dir, name);
      const bytes = readFileSync(path);
      if (damage === "truncate") truncateSync(path, Math.floor(bytes.length / 2));
      else {
        bytes[Math.floor(bytes.length / 3)] ^= 0x20;
        writeFileSync(path, bytes);
      }
      assert.throws(
        () => openIndex(dir).close(),
        (e) =>
          e instanceof DataError &&
          e.file === path &&
          (damage === "truncate" ? /torn or truncated/ : /does not match its checksum/).test(e.message),
        `${damage} ${name}`,
      );
    }
  }
});

test("ingest on a full disk (file size limit) stops with one clear line, and a rerun resumes to the same index", async () => {
  const root = tempDir("cc-full-");
  const rows = gunzipSync(readFileSync(BUILTIN_CORPUS.path)).toString("utf8").split("\n").filter(Boolean);
  const corpus = join(root, "c.jsonl");
  writeFileSync(corpus, `${rows.slice(0, 300).join("\n")}\n`);
  const full = join(root, "full");
  const main = join(import.meta.dirname, "..", "src", "cli", "main.ts");
  // ulimit -f: writes past 120 KiB fail with EFBIG after a partial write, as on a disk that fills up.
  const r = spawnSync(
    "bash",
    [
      "-c",
      'ulimit -f 120; exec "$0" --import tsx "$1" ingest "$2" --index "$3" --no-vectors',
      process.execPath,
      main,
      corpus,
      full,
    ],
    { encoding: "utf8" },
  );
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stderr.trim().split("\n");
  assert.match(
    lines[lines.length - 1],
    /^climatecheck: no space left to write.*\(EFBIG\); .*run the same command again/,
  );
  assert.throws(
    () => openIndex(full),
    (e) => e instanceof DataError && /did not finish/.test(e.message),
  );
  const { ingest } = await import("../src/index/ingest.ts");
  await ingest(corpus, full);
  await ingest(corpus, join(root, "ref"));
  const manifest = (dir: string) => {
    const index = openIndex(dir);
    index.close();
    return { files: index.manifest.files, committed: index.manifest.committed };
  };
  assert.deepEqual(manifest(full), manifest(join(root, "ref")));
});
