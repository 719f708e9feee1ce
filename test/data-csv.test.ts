import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parse } from "csv-parse/sync";
import { readAll } from "../src/data/tables.ts";
import { tempDir } from "./retrieval-fixtures.ts";

/** What csv-parse itself gives (the reader's fallback and reference): rows with the line each record ends on. */
function reference(text: string): { line: number; row: Record<string, string> }[] {
  const recs = parse(text, { columns: true, info: true, skip_empty_lines: true, bom: true }) as {
    record: Record<string, string>;
    info: { lines: number };
  }[];
  return recs.map((r) => ({ line: r.info.lines, row: r.record }));
}

test("fast CSV reader gives csv-parse's rows and line numbers, and falls back to it for unusual input", async () => {
  const dir = tempDir();
  const cases: Record<string, string> = {
    basic: "a,b\n1,2\n3,4\n",
    crlf: "a,b\r\n1,2\r\n3,4\r\n",
    quotes: 'a,b\n"he said ""hi""",2\n"",""\n,\n',
    emptyLines: "a,b\n\n1,2\n\n\n3,4\n\n",
    quotedNewlines: 'a,b\n1,"x\ny\nz"\n2,z\n',
    crInsideQuotes: 'a,b\r\n1,"x\r\ny"\r\n2,z\r\n',
    noFinalNewline: 'a,b\n1,2\n3,"4"',
    unicode: 'a,b\n"é ’ 𝐀, ok",ü\n',
    bom: "\ufeffa,b\n1,2\n",
    repeatedHeader: "a,a\n1,2\n",
    longQuoted: `a,b\n"${"x,y\n".repeat(40_000)}",2\n3,4\n`,
  };
  for (const [name, text] of Object.entries(cases)) {
    const path = join(dir, `${name}.csv`);
    writeFileSync(path, text);
    const got = (await readAll(path)).map((r) => ({ line: r.line, row: r.row }));
    assert.deepEqual(got, reference(text), name);
  }
  for (const [name, text, message] of [
    [
      "fieldCount",
      "a,b\n1,2\n1,2,3\n",
      /line 3, field "#3": malformed CSV \(wrong number of fields: 3 for 2 columns, this one is past the last/,
    ],
    [
      "fieldShort",
      "a,b,c\n1,2,3\n1,2\n",
      /line 3, field "c": malformed CSV \(wrong number of fields: 2 for 3 columns, the record ends before/,
    ],
    ["strayQuote", 'a,b\n1,x"y\n', /line 2, field "b": malformed CSV \(Invalid Opening Quote/],
    ["unclosed", 'a,b\n1,"abc\n', /field "b": malformed CSV \(Quote Not Closed/],
  ] as const) {
    const path = join(dir, `${name}.csv`);
    writeFileSync(path, text);
    await assert.rejects(readAll(path), message, name);
  }
});
