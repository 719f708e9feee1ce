/**
 * Damaged Parquet files that hyparquet 1.33.0 cannot be left to read: they must end in a DataError naming the file,
 * the row group and the column, never a hang or a crash. Each damaged file is read in a child process, so a
 * regression fails the test (killed after a minute) instead of spinning the test runner forever.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parquetWriteFile } from "hyparquet-writer";
import { readCorpus } from "../src/data/climatecheck.ts";
import { tempDir } from "./retrieval-fixtures.ts";

/** Found by the fuzz run (seed 25, case 126 of the Parquet target): a data page v2 header lost its level lengths. */
const SPINS = [
  "UEFSMRUGFX4VgAFcFQwVABUMFQAVBBUAAAADPz2gCAAAAHE2V1cxU0EtBwAAAHdWdSZ7Pl8EAAAANDRcagYAAAA8flEiaDMBCjxS",
  "RV1nQkQGAAAAayMlNyo3FQYVYBVkXBUMAhUAFQwVABUEFQAAAAM/LrQJAAAAcWB3Jz4gRXgxBgAAAGdkUkNmXgIAAABcbAMAAAAi",
  "ZCgAAAAAAgAAAHtWFQQZPEgEcm9vdBUEABUMJQIYC2Fic3RyYWN0X2lkJQAAFQwlAhgIYWJzdHJhY3QlAAAWDBkcGSwmCBwVDBkV",
  "ABkYC2Fic3RyYWN0X2lkFQIWDBaqARasASYIPDYAKAd3VnUmez5fGAQ0NFxqABkcFQYVABUCAAAAJrQBHBUMGRUAGRgIYWJzdHJh",
  "Y3QVAhYMFooBFo4BJrQBPDYAKAJ7VhgAABkcFQYVABUCAAAAFrQCFgw2ugIAKAloeXBhcnF1ZXQZLBwAABwAAADLAAAAUEFSMQ==",
].join("");

/** Found by the Parquet hang hunt: a column chunk names a column the schema lacks (renamed by a flipped byte). */
const UNKNOWN_COLUMN = [
  "UEFSMRUGFVYVWFwVChUAFQoVABUEFQAAAAMfKVgAAAAABwAAAGl4JHN2SisEAAAAU1hscAEINDJnKiwGAAAAPCRLRzp7FQYVXhVi",
  "XBUKFQAVChUAFQQVAAAAAx8tsAIAAABndQQAAAB5e0ZDAQAAAF0IAAAAY0lrOjlwZGAKAAAAJ15+QmYxQ1UlUBUEGTxIBHJvb3QV",
  "BAAVDCUCGAthYnN0cmFjdF9pZCUAABUMJQIYCGFic3RyYWN0JQAAFgoZHBksJggcFQwZFQAZGAthYnN0cmFjdF9pZBUCFgoWgAEW",
  "ggEmCDw2ACgHaXgkc3ZKKxgAABkcFQYVABUCAAAAJooBHBUMGRUAGRgImGJzdHJhY3QVAhYKFogBFowBJooBPDYAKAR5e0ZDGAon",
  "Xn5CZjFDVSVQABkcFQYVABUCAAAAFogCFgo2jgIAKAloeXBhcnF1ZXQZLBwAABwAAADTAAAAUEFSMQ==",
].join("");

const dir = tempDir("cc-parquet-damaged-");

/** Drains the corpus in a child; its one stdout line is the DataError's message (or "read N"). */
function readInChild(path: string): { status: number | null; out: string; err: string } {
  const code = `import { readCorpus } from ${JSON.stringify(new URL("../src/data/climatecheck.ts", import.meta.url).href)};
let n = 0;
try { for await (const _ of readCorpus(process.argv[1])) n++; console.log("read " + n); }
catch (e) { console.log(e.name + ": " + e.message); }`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code, path], {
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: r.status, out: r.stdout.trim(), err: r.stderr };
}

test("a Parquet page header without its level lengths (hyparquet spins on it) is refused, naming row group and column", () => {
  const path = join(dir, "spins.parquet");
  writeFileSync(path, Buffer.from(SPINS, "base64"));
  const r = readInChild(path);
  assert.equal(r.status, 0, `the read did not end (spin?) or crashed: ${r.err}`);
  assert.equal(
    r.out,
    `DataError: ${path}, field "abstract": damaged Parquet file: row group 1, column abstract: page at byte 90: data page (v2) without its counts, level lengths or encoding`,
  );
});

test("a Parquet column chunk of a column the schema lacks is refused, not an unhandled rejection that kills the process", () => {
  const path = join(dir, "unknown-column.parquet");
  writeFileSync(path, Buffer.from(UNKNOWN_COLUMN, "base64"));
  const r = readInChild(path);
  assert.equal(r.status, 0, `the read did not end or crashed: ${r.err}`);
  assert.match(r.out, /^DataError: .*row group 1, column \S+: column not in the file's schema$/);
});

test("the layout checks pass valid files: several row groups and pages, dictionary pages, nulls", async () => {
  const path = join(dir, "valid.parquet");
  const ids = Array.from({ length: 300 }, (_, i) => `id${i}`);
  parquetWriteFile({
    filename: path,
    columnData: [
      { name: "abstract_id", data: ids, type: "STRING" },
      { name: "abstract", data: ids.map((id, i) => `text ${i % 7} of ${id}`), type: "STRING" },
      { name: "title", data: ids.map((_, i) => (i % 3 ? "same title" : null)), type: "STRING" },
      { name: "year", data: ids.map((_, i) => 1990 + (i % 30)), type: "INT32" },
    ],
    rowGroupSize: 120,
    pageSize: 256,
  });
  const got = [];
  for await (const r of readCorpus(path)) got.push(r.abstract);
  assert.deepEqual(
    got.map((a) => a.id),
    ids,
  );
  assert.equal(got[1].title, "same title");
  assert.equal(got[0].title, undefined);
});
