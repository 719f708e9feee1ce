/**
 * Fuzz targets (fast-check) for the readers and the HTTP API: random and mutated inputs (broken quoting, stray
 * bytes, huge fields, deep JSON, unicode edge cases, numbers out of range). The property of every reader: it
 * returns, or fails with a DataError naming the file (and the line or field where there is one); never another
 * exception, never a hang. Of the API: never a 5xx, and every error answer is JSON with an `error` text. Shared by
 * the short run in `npm test` (test/fuzz.test.ts) and the long one (`npm run fuzz`, bench/reliability-fuzz.ts).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { parquetWriteBuffer } from "hyparquet-writer";
import {
  readClaims,
  readCorpus,
  readTask1Gold,
  readTask1Predictions,
  readTask2Gold,
  readTask2Predictions,
} from "../src/data/climatecheck.ts";
import { DataError } from "../src/data/errors.ts";
import type { createApp } from "../src/server/app.ts";

/** What one case came to. */
export type Outcome = "accepted" | "refused";

export interface Tally {
  cases: number;
  accepted: number;
  /** Refused with a DataError; of those, how many named a line, a field. */
  refused: number;
  withLine: number;
  withField: number;
  /** HTTP status counts (API target). */
  statuses: Record<string, number>;
}

export const newTally = (): Tally => ({
  cases: 0,
  accepted: 0,
  refused: 0,
  withLine: 0,
  withField: 0,
  statuses: {},
});

/** A case taking longer than this is a hang. */
const HANG_MS = 10_000;

async function noHang<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${what} took over ${HANG_MS} ms`)), HANG_MS);
  });
  try {
    return await Promise.race([p, hang]);
  } finally {
    clearTimeout(timer);
  }
}

// ---- inputs -------------------------------------------------------------------------------------------------

const COLUMNS = [
  "claim_id",
  "claim",
  "abstract_id",
  "abstract_original_index",
  "abstract",
  "title",
  "rank",
  "label",
  "annotation",
  "narrative",
  "doi",
  "year",
];

/** Cells as people and programs get them wrong. */
const cell: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "Supports",
      "refutes",
      "Not Enough Information",
      "NEI",
      "1_1",
      "0_0;5_2",
      "c1",
      "a1",
      "1",
      "0",
      "-1",
      "1e309",
      "NaN",
      "9007199254740993",
      "\uFEFF",
      "\u0000",
      "\uD800",
      "e\u0301",
      "\u202E",
      '"',
      '""',
      ",",
      "\r\n",
      "\n",
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 5000 }).map((n) => "x".repeat(n)) },
  { weight: 1, arbitrary: fc.double().map(String) },
);

/** Plausible values of a known column, so that many generated files are valid and the deeper checks run. */
function plausible(column: string): fc.Arbitrary<string> {
  const ids = fc.nat(6).map((n) => `c${n}`);
  if (column === "claim_id") return ids;
  if (column === "abstract_id" || column === "abstract_original_index") return fc.nat(9).map((n) => `a${n}`);
  if (column === "rank") return fc.integer({ min: 1, max: 12 }).map(String);
  if (column === "label" || column === "annotation")
    return fc.constantFrom("Supports", "Refutes", "Not Enough Information", "supports");
  if (column === "narrative") return fc.constantFrom("0_0", "1_1", "1_1;5_2", "2_1");
  return fc.string({ minLength: 1, maxLength: 20 }).filter((x) => x.trim() !== "" && !/[",\r\n]/.test(x));
}

/** A header with a target's columns (in any order, maybe with extras) or an arbitrary one. */
function header(columns: string[]): fc.Arbitrary<string[]> {
  const arbitrary = fc.uniqueArray(fc.oneof(fc.constantFrom(...COLUMNS), fc.string({ maxLength: 6 })), {
    minLength: 1,
    maxLength: 6,
  });
  const wanted = fc.shuffledSubarray([...columns, "title", "year"], { minLength: columns.length });
  return fc.oneof({ weight: 3, arbitrary: wanted }, { weight: 1, arbitrary });
}

/** Rows for a header: mostly plausible cells, some of any kind. */
function rows(h: string[], quote: (c: string) => fc.Arbitrary<string>): fc.Arbitrary<string[][]> {
  const row = fc.tuple(
    ...h.map((c) =>
      fc.oneof({ weight: 30, arbitrary: plausible(c) }, { weight: 1, arbitrary: cell }).chain(quote),
    ),
  );
  const ragged = fc.array(cell.chain(quote), { maxLength: 7 });
  return fc.array(fc.oneof({ weight: 30, arbitrary: row }, { weight: 1, arbitrary: ragged }), {
    maxLength: 8,
  });
}

const csvQuote = (c: string) =>
  fc.nat(39).map((q) => {
    if (q < 37) return /[",\r\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c;
    if (q < 38) return `"${c}"`;
    if (q < 39) return `"${c}`;
    return c;
  });

function csvText(columns: string[]): fc.Arbitrary<string> {
  return header(columns).chain((h) =>
    fc
      .tuple(rows(h, csvQuote), fc.constantFrom("\n", "\r\n"))
      .map(([rs, eol]) => [h.join(","), ...rs.map((r) => r.join(","))].join(eol) + eol),
  );
}

/** Deeply nested JSON, the kind that overflows a recursive parser. */
const deepJson = fc.integer({ min: 100, max: 20_000 }).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`);

function jsonlText(columns: string[]): fc.Arbitrary<string> {
  const good = header(columns).chain((h) =>
    rows(h, fc.constant).map((rs) =>
      rs.map((r) => JSON.stringify(Object.fromEntries(h.map((c, i) => [c, r[i]])))),
    ),
  );
  const odd = fc.array(
    fc.oneof(
      fc
        .dictionary(fc.constantFrom(...COLUMNS), fc.oneof(cell, fc.jsonValue({ maxDepth: 3 })))
        .map((o) => JSON.stringify(o)),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      deepJson,
      fc.string({ unit: "binary", maxLength: 30 }),
    ),
    { maxLength: 8 },
  );
  return fc
    .oneof({ weight: 2, arbitrary: good }, { weight: 1, arbitrary: odd })
    .map((lines) => `${lines.join("\n")}\n`);
}

/** Bytes of a file with random damage: stray bytes, cut, spliced, duplicated. */
function mutate(base: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  const edit = fc.tuple(fc.nat(5), fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat(64));
  return fc.tuple(base, fc.array(edit, { minLength: 1, maxLength: 6 })).map(([bytes, edits]) => {
    let b = Buffer.from(bytes);
    for (const [kind, at0, byte, len] of edits) {
      const at = b.length ? at0 % b.length : 0;
      if (kind === 0) b = Buffer.concat([b.subarray(0, at), Buffer.from([byte]), b.subarray(at)]);
      else if (kind === 1) b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + len)]);
      else if (kind === 2 && b.length) b[at] = byte;
      else if (kind === 3) b = b.subarray(0, at);
      else if (kind === 4) b = Buffer.concat([b.subarray(0, at), b.subarray(at, at + len), b.subarray(at)]);
      else
        b = Buffer.concat([
          b.subarray(0, at),
          Buffer.from([[0xff, 0xfe, 0xc3, 0x28, 0x22, 0x0d][byte % 6]]),
          b.subarray(at),
        ]);
    }
    return new Uint8Array(b);
  });
}

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));
const csvBytes = (columns: string[]) =>
  fc.oneof(
    { weight: 3, arbitrary: csvText(columns).map(utf8) },
    { weight: 1, arbitrary: mutate(csvText(columns).map(utf8)) },
  );
const jsonlBytes = (columns: string[]) =>
  fc.oneof(
    { weight: 3, arbitrary: jsonlText(columns).map(utf8) },
    { weight: 1, arbitrary: mutate(jsonlText(columns).map(utf8)) },
  );
const gzipped = (b: fc.Arbitrary<Uint8Array>) => b.map((x) => new Uint8Array(gzipSync(x)));

const validParquet = fc
  .array(fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 40 })), {
    minLength: 1,
    maxLength: 6,
  })
  .map(
    (rows) =>
      new Uint8Array(
        parquetWriteBuffer({
          columnData: [
            { name: "abstract_id", data: rows.map((r) => r[0]), type: "STRING" },
            { name: "abstract", data: rows.map((r) => r[1]), type: "STRING" },
          ],
        }),
      ),
  );
const parquetBytes = fc.oneof(validParquet, mutate(validParquet));

// ---- reader targets -----------------------------------------------------------------------------------------

export interface ReaderTarget {
  name: string;
  /** File name the bytes are written to (its extension picks the format). */
  file: string;
  bytes: fc.Arbitrary<Uint8Array>;
  read(path: string): Promise<unknown>;
}

async function drain(path: string): Promise<number> {
  let n = 0;
  for await (const _ of readCorpus(path)) n++;
  return n;
}

const CLAIMS = ["claim_id", "claim"];
const CORPUS = ["abstract_id", "abstract"];
const GOLD1 = ["claim_id", "abstract_id", "annotation"];
const PRED1 = ["claim_id", "abstract_id", "rank", "label"];
const TASK2 = ["claim_id", "narrative"];

export const READER_TARGETS: ReaderTarget[] = [
  { name: "claims CSV (fast path)", file: "claims.csv", bytes: csvBytes(CLAIMS), read: readClaims },
  { name: "claims JSONL", file: "claims.jsonl", bytes: jsonlBytes(CLAIMS), read: readClaims },
  {
    name: "corpus CSV.gz",
    file: "corpus.csv.gz",
    bytes: fc.oneof(gzipped(csvBytes(CORPUS)), mutate(gzipped(csvBytes(CORPUS)))),
    read: drain,
  },
  { name: "corpus JSONL", file: "corpus.jsonl", bytes: jsonlBytes(CORPUS), read: drain },
  { name: "corpus Parquet", file: "corpus.parquet", bytes: parquetBytes, read: drain },
  { name: "evaluate: task 1 gold", file: "gold.csv", bytes: csvBytes(GOLD1), read: readTask1Gold },
  {
    name: "evaluate: task 1 predictions",
    file: "pred.csv",
    bytes: csvBytes(PRED1),
    read: readTask1Predictions,
  },
  { name: "evaluate: task 2 gold", file: "gold2.csv", bytes: csvBytes(TASK2), read: readTask2Gold },
  {
    name: "evaluate: task 2 predictions",
    file: "pred2.jsonl",
    bytes: jsonlBytes(TASK2),
    read: readTask2Predictions,
  },
];

/** The property of a reader target, counting outcomes into `tally`. */
export function readerProperty(t: ReaderTarget, dir: string, tally: Tally) {
  const path = join(dir, t.file);
  return fc.asyncProperty(t.bytes, async (bytes) => {
    writeFileSync(path, bytes);
    tally.cases++;
    try {
      await noHang(t.read(path), t.name);
      tally.accepted++;
    } catch (e) {
      if (!(e instanceof DataError)) throw e;
      if (e.file !== path) throw new Error(`error names ${e.file}, not the file read: ${e.message}`);
      if (!e.message.startsWith(path)) throw new Error(`error does not start with the file: ${e.message}`);
      if (/\n/.test(e.message)) throw new Error(`error is more than one line: ${e.message}`);
      tally.refused++;
      if (e.line !== undefined) tally.withLine++;
      if (e.field !== undefined) tally.withField++;
    }
  });
}

// ---- API target ---------------------------------------------------------------------------------------------

const jsonBody = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record(
        {
          claim: fc.oneof(
            {
              weight: 3,
              arbitrary: fc.constantFrom("Sea level rise is accelerating", "The sun causes warming"),
            },
            { weight: 1, arbitrary: cell },
            { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
          ),
          k: fc.oneof(
            fc.integer({ min: -5, max: 100 }),
            fc.double(),
            fc.string({ maxLength: 4 }),
            fc.constant(Number.MAX_SAFE_INTEGER * 4 + 1),
          ),
          abstract: fc.oneof(cell, fc.jsonValue({ maxDepth: 2 })),
          abstract_id: cell,
          claims: fc.array(cell, { maxLength: 3 }),
          fast: fc.jsonValue({ maxDepth: 1 }),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: deepJson },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 60_000, max: 200_000 }).map((n) => JSON.stringify({ claim: "x".repeat(n) })),
  },
);

const randomRequest = fc.record({
  method: fc.oneof(
    { weight: 6, arbitrary: fc.constant("POST") },
    { weight: 2, arbitrary: fc.constant("GET") },
    { weight: 1, arbitrary: fc.constantFrom("PUT", "DELETE", "HEAD", "OPTIONS", "PATCH") },
  ),
  path: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom("/v1/check", "/v1/verify", "/v1/narratives") },
    fc.constantFrom(
      "/v1/check",
      "/v1/verify",
      "/v1/narratives",
      "/healthz",
      "/openapi.json",
      "/",
      "/v1/abstracts/a1",
    ),
    fc.string({ maxLength: 20 }).map((s) => `/v1/abstracts/${encodeURIComponent(s)}`),
    fc.string({ maxLength: 20 }).map((s) => `/${encodeURIComponent(s)}`),
    fc.constantFrom(
      "/v1/abstracts/%E0%A4%A",
      "/v1/abstracts/%FF",
      "/v1/check?k=1e309",
      "/%2e%2e/%2e%2e/etc/passwd",
    ),
  ),
  type: fc.constantFrom(
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "",
    "application/x+json",
  ),
  body: fc.oneof(jsonBody.map(utf8), mutate(jsonBody.map(utf8))),
});

/** Well-formed requests with odd claims, so the pipeline itself is fed too. */
const validRequest = fc.oneof(
  fc.record({
    method: fc.constant("POST"),
    path: fc.constant("/v1/check"),
    type: fc.constant("application/json"),
    body: fc
      .tuple(cell, fc.integer({ min: 1, max: 5 }))
      .map(([claim, k]) => utf8(JSON.stringify({ claim, k }))),
  }),
  fc.record({
    method: fc.constant("POST"),
    path: fc.constant("/v1/narratives"),
    type: fc.constant("application/json"),
    body: cell.map((claim) => utf8(JSON.stringify({ claim }))),
  }),
  fc.record({
    method: fc.constantFrom("GET", "HEAD"),
    path: fc.constantFrom("/healthz", "/openapi.json", "/v1/abstracts/a1", "/"),
    type: fc.constant(""),
    body: fc.constant(new Uint8Array()),
  }),
);

const apiRequest = fc.oneof({ weight: 1, arbitrary: validRequest }, { weight: 2, arbitrary: randomRequest });

/** The property of the API: no 5xx, errors are JSON with an `error` text. */
export function apiProperty(app: ReturnType<typeof createApp>, tally: Tally) {
  return fc.asyncProperty(apiRequest, async (r) => {
    tally.cases++;
    const init: RequestInit = { method: r.method, headers: r.type ? { "content-type": r.type } : {} };
    if (r.method !== "GET" && r.method !== "HEAD") init.body = r.body;
    const res = await noHang(Promise.resolve(app.request(r.path, init)), `${r.method} ${r.path}`);
    const text = await res.text();
    tally.statuses[res.status] = (tally.statuses[res.status] ?? 0) + 1;
    if (res.status >= 500) throw new Error(`${r.method} ${r.path}: ${res.status} ${text.slice(0, 200)}`);
    if (res.status >= 400) {
      tally.refused++;
      if (r.method === "HEAD") return;
      const error = (JSON.parse(text) as { error?: unknown }).error;
      if (typeof error !== "string" || error === "")
        throw new Error(`${res.status} without an error text: ${text}`);
    } else tally.accepted++;
  });
}
