import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { parquetWriteFile } from "hyparquet-writer";
import {
  readClaims,
  readCorpus,
  readTask1Gold,
  readTask1Predictions,
  readTask2Gold,
  readTask2Predictions,
  writeTask1Predictions,
  writeTask2Predictions,
} from "../src/data/climatecheck.ts";
import { DataError } from "../src/data/errors.ts";
import { readAll, readTable, writeCsv } from "../src/data/tables.ts";
import type { CorpusAbstract, Task1Prediction, Task2Prediction } from "../src/types.ts";

const dir = mkdtempSync(join(tmpdir(), "cc-formats-"));
const file = (name: string, text: string | Buffer) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const NASTY_IDS = ["a,b", 'say "hi"', "multi\nline", "Ünïcødé ✓", " spaced id "];

async function readCorpusAll(path: string): Promise<number> {
  let n = 0;
  for await (const _ of readCorpus(path)) n++;
  return n;
}

async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof DataError, `expected DataError, got ${e}`);
    assert.match(e.message, pattern);
    return true;
  });
}

test("task 1 predictions round-trip with ids holding commas, quotes, newlines and non-ASCII", async () => {
  const preds: Task1Prediction[] = NASTY_IDS.map((id, i) => ({
    claimId: id,
    abstractId: `abs ${id}`,
    rank: i + 1,
    label: i % 2 ? "Refutes" : "Not Enough Information",
  }));
  const path = join(dir, "t1.csv");
  await writeTask1Predictions(path, preds);
  assert.equal(readFileSync(path, "utf8").split("\n")[0], "claim_id,abstract_id,rank,label");
  // Ids are trimmed on read, as every cell is.
  assert.deepEqual(
    await readTask1Predictions(path),
    preds.map((p) => ({ ...p, claimId: p.claimId.trim(), abstractId: p.abstractId.trim() })),
  );
});

test("retrieval-only task 1 predictions are written without a label column", async () => {
  const path = join(dir, "t1-nolabel.csv");
  await writeTask1Predictions(path, [{ claimId: "c1", abstractId: "7", rank: 1 }]);
  assert.equal(readFileSync(path, "utf8"), "claim_id,abstract_id,rank\nc1,7,1\n");
  assert.deepEqual(await readTask1Predictions(path), [{ claimId: "c1", abstractId: "7", rank: 1 }]);
});

test("task 2 predictions round-trip and ignore an abstract_id column", async () => {
  const preds: Task2Prediction[] = [
    { claimId: "x,1", codes: ["1_6", "5_1"] },
    { claimId: "é", codes: ["0_0"] },
  ];
  const path = join(dir, "t2.csv");
  await writeTask2Predictions(path, preds);
  assert.equal(readFileSync(path, "utf8"), 'claim_id,narrative\n"x,1",1_6;5_1\né,0_0\n');
  assert.deepEqual(await readTask2Predictions(path), preds);
  const withAbs = file("t2abs.csv", "claim_id,abstract_id,narrative\nc1,99,4_0\n");
  assert.deepEqual(await readTask2Predictions(withAbs), [{ claimId: "c1", codes: ["4_0"] }]);
});

test("labels file gives claims, task 1 gold (either abstract column) and task 2 gold", async () => {
  const labels = file(
    "labels.csv",
    [
      "claim_id,claim,abstract_id,abstract,annotation,data_version,narrative",
      'c1,"Sea level rise is not accelerating",10,"Text, with comma",supports,v1,1_6',
      "c1,Sea level rise is not accelerating,11,Other,Not Enough Information,v1,1_6",
      "c2,Models are junk,12,More,REFUTES,v1,5_1;5_0",
    ].join("\n"),
  );
  assert.deepEqual(await readClaims(labels), [
    { id: "c1", text: "Sea level rise is not accelerating" },
    { id: "c2", text: "Models are junk" },
  ]);
  assert.deepEqual(await readTask1Gold(labels), [
    { claimId: "c1", abstractId: "10", label: "Supports" },
    { claimId: "c1", abstractId: "11", label: "Not Enough Information" },
    { claimId: "c2", abstractId: "12", label: "Refutes" },
  ]);
  const alt = file("gold-alt.csv", "claim_id,abstract_original_index,annotation\nc1,5,Refutes\n");
  assert.deepEqual(await readTask1Gold(alt), [{ claimId: "c1", abstractId: "5", label: "Refutes" }]);
  assert.deepEqual(await readTask2Gold(labels), [
    { id: "c1", text: "Sea level rise is not accelerating", codes: ["1_6"] },
    { id: "c2", text: "Models are junk", codes: ["5_1", "5_0"] },
  ]);
});

test("bad input names file, line and field", async () => {
  await rejects(
    readTask1Predictions(file("p1.csv", "claim_id,abstract_id,rank\nc1,1,1\nc1,2,x\n")),
    /p1\.csv, line 3, field "rank": rank must be a whole number/,
  );
  await rejects(
    readTask1Predictions(file("p2.csv", "claim_id,abstract_id,rank\nc1,1,1\nc1,1,2\n")),
    /p2\.csv, line 3, field "abstract_id": duplicate prediction \(c1, 1\), first on line 2/,
  );
  await rejects(
    readTask1Predictions(file("p3.csv", "claim_id,rank\nc1,1\n")),
    /p3\.csv, line 2, field "abstract_id": missing column/,
  );
  await rejects(
    readTask1Predictions(file("p4.csv", "claim_id,abstract_id,rank,label\nc1,1,1,Maybe\n")),
    /line 2, field "label": unknown label "Maybe"/,
  );
  await rejects(
    readTask2Predictions(file("p5.csv", "claim_id,narrative\nc1,1_6\nc2,9_9\n")),
    /p5\.csv, line 3, field "narrative": unknown CARDS code "9_9"/,
  );
  await rejects(readTask2Predictions(file("p6.csv", "")), /p6\.csv: the file has no rows/);
  await rejects(readTask2Predictions(file("p7.csv", "claim_id,narrative\n")), /the file has no rows/);
  await rejects(
    readTask2Predictions(file("p8.csv", Buffer.from("claim_id,narrative\nc1,1_6\n\xff\xfe,2_1\n", "latin1"))),
    /p8\.csv, line 3, field "claim_id": not valid UTF-8/,
  );
  // JSON Lines: the key at a syntax error or a bad byte, even when the line does not parse.
  await rejects(
    readTask2Predictions(
      file("j1.jsonl", '{"claim_id": "c1", "narrative": "1_6"}\n{"claim_id": "c2", "narrative": 1_}\n'),
    ),
    /j1\.jsonl, line 2, field "narrative": not valid JSON/,
  );
  await rejects(
    readTask2Predictions(
      file(
        "j2.jsonl",
        Buffer.from(
          '{"claim_id": "c1", "narrative": "1_6"}\n{"claim_id": "c\xff", "narrative": "1_6"}}\n',
          "latin1",
        ),
      ),
    ),
    /j2\.jsonl, line 2, field "claim_id": not valid UTF-8/,
  );
  await rejects(
    readCorpusAll(file("c1.csv", "title,abstract\nt,a\n")),
    /c1\.csv, line 2, field "abstract_id": cannot tell the corpus format/,
  );
  await rejects(readTask1Predictions(join(dir, "missing.csv")), /missing\.csv: file not found/);
  await rejects(readTask1Predictions(file("p9.txt", "x")), /unsupported file type/);
});

const corpus: CorpusAbstract[] = [
  { id: "1", title: "Sea level", abstract: "Sea level rose 3.3 mm/yr, and it accelerates.", doi: "10.1/x" },
  { id: "a,2", title: "Ünïcødé", abstract: 'He said "no".\nNew line.', url: "https://ex.org/2" },
];

test("corpus reads the same from CSV, JSONL, gzip and Parquet", async () => {
  const rows = corpus.map((c) => ({
    abstract_id: c.id,
    title: c.title,
    abstract: c.abstract,
    doi: c.doi ?? "",
    url: c.url ?? "",
  }));
  const csv = join(dir, "corpus.csv");
  await writeCsv(
    csv,
    ["abstract_id", "title", "abstract", "doi", "url"],
    rows.map((r) => [r.abstract_id, r.title, r.abstract, r.doi, r.url]),
  );
  const jsonl = file("corpus.jsonl", rows.map((r) => JSON.stringify(r)).join("\n"));
  const gz = file("corpus.jsonl.gz", gzipSync(readFileSync(jsonl)));
  const csvGz = file("corpus.csv.gz", gzipSync(readFileSync(csv)));
  const parquet = join(dir, "corpus.parquet");
  parquetWriteFile({
    filename: parquet,
    columnData: [
      { name: "abstract_id", data: rows.map((r) => r.abstract_id), type: "STRING" },
      { name: "title", data: rows.map((r) => r.title), type: "STRING" },
      { name: "abstract", data: rows.map((r) => r.abstract), type: "STRING" },
      { name: "doi", data: rows.map((r) => r.doi), type: "STRING" },
      { name: "url", data: rows.map((r) => r.url), type: "STRING" },
    ],
    rowGroupSize: 1,
  });
  for (const path of [csv, jsonl, gz, csvGz, parquet]) {
    const got: CorpusAbstract[] = [];
    for await (const { abstract } of readCorpus(path)) got.push(abstract);
    assert.deepEqual(got, corpus, path);
  }
});

test("corpus rows without id or text are errors, or counted skips with their line", async () => {
  const path = file("bad-corpus.csv", "abstract_id,abstract\n1,fine\n,no id\n3,\n");
  await assert.rejects(async () => {
    for await (const _ of readCorpus(path));
  }, /bad-corpus\.csv, line 3, field "abstract_id": missing abstract id/);
  const skipped: string[] = [];
  const ids: string[] = [];
  for await (const { abstract } of readCorpus(path, {
    onSkip: (line, why) => skipped.push(`${line} ${why}`),
  })) {
    ids.push(abstract.id);
  }
  assert.deepEqual(ids, ["1"]);
  assert.deepEqual(skipped, ["3 abstract_id: missing abstract id", "4 abstract: missing abstract text"]);
});

test("SciFact and Climate-FEVER layouts are detected and keep sentence boundaries", async () => {
  const sf = file("sf.csv", `doc_id,title,abstract,structured\n42,T,"['It\\'s one.'\n ""Two's.""]",False\n`);
  const got: CorpusAbstract[] = [];
  for await (const { abstract } of readCorpus(sf)) got.push(abstract);
  assert.deepEqual(got, [
    { id: "42", title: "T", abstract: "It's one. Two's.", sentences: ["It's one.", "Two's."] },
  ]);
  const cf = file(
    "cf.jsonl",
    `${JSON.stringify({
      claim_id: "1",
      claim: "c",
      evidences: [
        { evidence_id: "A:1", article: "A", evidence: "S1" },
        { evidence_id: "A:1", article: "A", evidence: "S1" },
      ],
    })}\n`,
  );
  const ev: CorpusAbstract[] = [];
  for await (const { abstract } of readCorpus(cf)) ev.push(abstract);
  assert.deepEqual(ev, [{ id: "A:1", abstract: "S1", title: "A", sentences: ["S1"] }]);
});

test("CSV reader keeps line numbers across quoted newlines", async () => {
  const rows = await readAll(file("lines.csv", 'a,b\n1,"x\ny"\n2,z\n'));
  assert.deepEqual(
    rows.map((r) => r.line),
    [3, 4],
  );
});

test("Parquet is read in slices across row groups, in order, with row numbers", async () => {
  const path = join(dir, "slices.parquet");
  const ids = Array.from({ length: 23 }, (_, i) => `id${i}`);
  parquetWriteFile({
    filename: path,
    columnData: [
      { name: "abstract_id", data: ids, type: "STRING" },
      { name: "abstract", data: ids.map((id) => `text of ${id}`), type: "STRING" },
    ],
    rowGroupSize: 10,
  });
  const rows = [];
  for await (const r of readTable(path, { parquetSliceRows: 4, columns: ["abstract_id"] })) rows.push(r);
  assert.deepEqual(
    rows.map((r) => r.row.abstract_id),
    ids,
  );
  assert.deepEqual(
    rows.map((r) => r.line),
    ids.map((_, i) => i + 1),
  );
  assert.ok(rows.every((r) => !("abstract" in r.row)));
});

test("a reader that stops at an error part way through closes its file (the long fuzz run ran out of descriptors)", {
  skip: !existsSync("/proc/self/fd") && "needs /proc/self/fd",
}, async () => {
  const rows = Array.from({ length: 3000 }, (_, i) =>
    JSON.stringify({ abstract_id: `a${i}`, abstract: "x".repeat(100) }),
  );
  const paths = [
    file("leak1.jsonl", `${rows.join("\n")}\nnot json\n`),
    file("leak2.csv", `claim_id,claim\nc1,"b"ad\n${"c1,x\n".repeat(20_000)}`),
    file("leak3.csv.gz", gzipSync(`abstract_id,abstract\n1,"b"ad\n${"1,x\n".repeat(20_000)}`)),
  ];
  const open = () => readdirSync("/proc/self/fd").length;
  const before = open();
  for (let i = 0; i < 10; i++)
    for (const path of paths)
      await assert.rejects(path.endsWith(".csv") ? readClaims(path) : readCorpusAll(path), DataError);
  // Let the destroyed streams close.
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(open() - before < 5, `${open() - before} descriptors left open by 30 failed reads`);
});
