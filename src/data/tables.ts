/**
 * The one tabular reader and writer of the project. Reads CSV (RFC 4180), JSON Lines and Parquet, plain or
 * gzipped, as a stream of rows with their line numbers, in bounded memory. Writes CSV atomically.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { parse } from "csv-parse";
import { stringify } from "csv-stringify";
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from "hyparquet";
import { DataError } from "./errors.ts";
import { checkParquetLayout } from "./parquet-check.ts";

export type Cell = string | number | boolean | null | undefined | unknown[] | Record<string, unknown>;
export type Row = Record<string, Cell>;

export interface NumberedRow {
  /** 1-based line of the file (for CSV, the line where the record ends) or 1-based row number (Parquet). */
  line: number;
  row: Row;
}

export type TableFormat = "csv" | "tsv" | "jsonl" | "parquet";

export function tableFormat(path: string): { format: TableFormat; gzip: boolean } {
  const lower = path.toLowerCase();
  const gzip = lower.endsWith(".gz");
  const base = gzip ? lower.slice(0, -3) : lower;
  if (base.endsWith(".csv")) return { format: "csv", gzip };
  if (base.endsWith(".tsv")) return { format: "tsv", gzip };
  if (base.endsWith(".jsonl") || base.endsWith(".ndjson") || base.endsWith(".json"))
    return { format: "jsonl", gzip };
  if (base.endsWith(".parquet") && !gzip) return { format: "parquet", gzip };
  throw new DataError(
    path,
    "unsupported file type (expected .csv, .tsv, .jsonl, .parquet, .csv.gz, .tsv.gz or .jsonl.gz)",
  );
}

/** The DataError of a byte that is not UTF-8, marked so the reader can look up the field it lies in. */
class NotUtf8 extends DataError {
  constructor(
    file: string,
    readonly reason: string,
    where: { line?: number },
  ) {
    super(file, reason, where);
  }
}

/**
 * Decodes UTF-8 strictly, so a file in another encoding fails with its line number instead of turning into mojibake.
 * `lenient` (only to find the field of such an error) turns bad bytes into U+FFFD instead.
 */
function strictUtf8(file: string, lenient = false): Transform {
  const decoder = new TextDecoder("utf-8", { fatal: !lenient });
  let line = 1;
  let first = true;
  return new Transform({
    readableObjectMode: false,
    transform(chunk: Buffer, _enc, done) {
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        done(
          new NotUtf8(file, "not valid UTF-8 (convert the file to UTF-8)", {
            line: line + countUntilBad(chunk),
          }),
        );
        return;
      }
      if (first) {
        text = text.replace(/^\uFEFF/, "");
        first = false;
      }
      for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
      done(null, text);
    },
    flush(done) {
      try {
        done(null, decoder.decode());
      } catch {
        done(new NotUtf8(file, "not valid UTF-8 (truncated character at end of file)", { line }));
      }
    },
  });
}

/**
 * Newlines before the first invalid byte of a chunk (for the error's line number). Binary search on prefixes (a
 * prefix fails to decode iff it holds the bad byte): decoding every prefix took seconds on a 64 KB chunk.
 */
function countUntilBad(chunk: Buffer): number {
  const bad = (n: number) => {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(chunk.subarray(0, n), { stream: true });
      return false;
    } catch {
      return true;
    }
  };
  let lo = 0;
  let hi = chunk.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (bad(mid + 1)) hi = mid;
    else lo = mid + 1;
  }
  let lines = 0;
  for (let i = 0; i < lo; i++) if (chunk[i] === 10) lines++;
  return lines;
}

async function assertReadable(path: string): Promise<void> {
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new DataError(path, "not a file");
  } catch (e) {
    if (e instanceof DataError) throw e;
    throw new DataError(path, "file not found or not readable");
  }
}

function textStream(path: string, gzip: boolean, lenient = false): Readable {
  const raw = createReadStream(path);
  const decoded = strictUtf8(path, lenient);
  if (gzip) {
    const gunzip = createGunzip();
    raw.on("error", (e) => decoded.destroy(e));
    gunzip.on("error", () => decoded.destroy(new DataError(path, "not a valid gzip file")));
    raw.pipe(gunzip).pipe(decoded);
    decoded.on("close", () => gunzip.destroy());
  } else {
    raw.on("error", (e) => decoded.destroy(e));
    raw.pipe(decoded);
  }
  // A reader that stops early (an error, a caller done) destroys `decoded`; pipe() would leave the file open.
  decoded.on("close", () => raw.destroy());
  return decoded;
}

/** Thrown by the fast CSV reader at anything it does not read exactly as csv-parse does. */
class NotPlainCsv extends Error {}

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

/**
 * Well-formed RFC 4180 CSV (`,` separated, `"` quoted with `""` escapes, LF or CRLF records, empty lines skipped)
 * read on the bytes with memchr-speed searches: csv-parse took about 40% of the time of ingesting SciFact. At
 * anything else (a stray quote, a CR alone or inside quotes, a wrong field count, repeated or empty column names,
 * a last record without its newline) it throws NotPlainCsv after the rows before it, and readCsv lets csv-parse
 * give the same rows and its own error from there. Bytes come from the strict UTF-8 check (whole characters per
 * chunk); quotes, commas and newlines are ASCII, so they never occur inside a multi-byte character.
 */
async function* readPlainCsv(path: string, gzip: boolean): AsyncGenerator<NumberedRow> {
  let buf: Buffer = Buffer.alloc(0);
  let line = 1;
  let header: string[] | undefined;
  for await (const chunk of textStream(path, gzip)) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    buf = buf.length ? Buffer.concat([buf, bytes]) : bytes;
    let pos = 0;
    // Next CR at or after a position (the buffer's length when none): searched once, not once per field.
    let nextCr = -1;
    const crAfter = (from: number) => {
      if (nextCr < from) {
        const i = buf.indexOf(CR, from);
        nextCr = i < 0 ? buf.length : i;
      }
      return nextCr;
    };
    for (;;) {
      // One complete record from pos; stop at the end of the buffer and read on.
      const fields: string[] = [];
      let quoted = false;
      let at = pos;
      let lines = line;
      let complete = false;
      while (at < buf.length) {
        if (buf[at] === QUOTE) {
          let value = "";
          let from = at + 1;
          let closed = -1;
          for (;;) {
            const q = buf.indexOf(QUOTE, from);
            if (q < 0 || q + 1 >= buf.length) break;
            if (buf[q + 1] === QUOTE) {
              value += buf.toString("utf8", from, q + 1);
              from = q + 2;
              continue;
            }
            value += buf.toString("utf8", from, q);
            closed = q;
            break;
          }
          if (closed < 0) break;
          if (crAfter(at) < closed) throw new NotPlainCsv();
          quoted = true;
          for (let i = buf.indexOf(LF, at); i >= 0 && i < closed; i = buf.indexOf(LF, i + 1)) lines++;
          fields.push(value);
          const after = buf[closed + 1];
          if (after === COMMA) at = closed + 2;
          else if (after === LF || (after === CR && buf[closed + 2] === LF)) {
            at = closed + (after === LF ? 2 : 3);
            complete = true;
            break;
          } else if (after === CR && closed + 2 >= buf.length) break;
          else throw new NotPlainCsv();
          continue;
        }
        // Unquoted field: up to the next comma or newline.
        const comma = buf.indexOf(COMMA, at);
        const lf = buf.indexOf(LF, at);
        if (lf < 0) break;
        const end = comma >= 0 && comma < lf ? comma : lf;
        const quote = buf.indexOf(QUOTE, at);
        if (quote >= 0 && quote < end) throw new NotPlainCsv();
        const cr = crAfter(at);
        const crlf = end === lf && cr === lf - 1;
        if (cr < end && !crlf) throw new NotPlainCsv();
        fields.push(buf.toString("utf8", at, crlf ? end - 1 : end));
        at = end + 1;
        if (end === lf) {
          complete = true;
          break;
        }
      }
      if (!complete) break;
      pos = at;
      line = lines + 1;
      // An empty line (one empty unquoted field) is skipped, as skip_empty_lines does.
      if (fields.length === 1 && fields[0] === "" && !quoted) continue;
      if (!header) {
        if (new Set(fields).size !== fields.length || fields.includes("")) throw new NotPlainCsv();
        header = fields;
        continue;
      }
      if (fields.length !== header.length) throw new NotPlainCsv();
      const row: Row = {};
      for (let i = 0; i < fields.length; i++) row[header[i]] = fields[i];
      yield { line: lines, row };
    }
    buf = buf.subarray(pos);
  }
  // Bytes after the last newline: a last record without one (csv-parse reads it; so does the fallback).
  for (let i = 0; i < buf.length; i++) if (buf[i] !== LF && buf[i] !== CR) throw new NotPlainCsv();
}

async function* readCsv(path: string, gzip: boolean): AsyncGenerator<NumberedRow> {
  let given = 0;
  try {
    for await (const r of readPlainCsv(path, gzip)) {
      given++;
      yield r;
    }
    return;
  } catch (e) {
    if (!(e instanceof NotPlainCsv)) throw e;
  }
  // csv-parse from the start: the rows already given are skipped, then its rows and its error follow.
  let seen = 0;
  for await (const r of readCsvParse(path, gzip)) if (seen++ >= given) yield r;
}

async function* readCsvParse(
  path: string,
  gzip: boolean,
  delimiter = ",",
  lenient = false,
): AsyncGenerator<NumberedRow> {
  const parser = parse({
    delimiter,
    columns: true,
    info: true,
    relax_column_count: false,
    skip_empty_lines: true,
    bom: true,
  });
  const source = textStream(path, gzip, lenient);
  source.on("error", (e) => parser.destroy(e));
  source.pipe(parser);
  try {
    for await (const rec of parser as AsyncIterable<{
      record: Row;
      info: { lines: number; records: number };
    }>) {
      yield { line: rec.info.lines, row: rec.record };
    }
  } catch (e) {
    if (e instanceof DataError) throw e;
    throw csvParseError(path, e);
  } finally {
    // A parser error leaves its source (and the file under it) open.
    source.destroy();
  }
}

/** csv-parse's error as a DataError naming the line and the field (column) it is in. */
function csvParseError(path: string, e: unknown): DataError {
  const err = e as {
    message?: string;
    lines?: number;
    code?: string;
    column?: string | number | null;
    columns?: { name: string }[] | boolean;
    record?: unknown[];
  };
  let msg = String(err.message ?? e);
  let field: string | undefined;
  const names = Array.isArray(err.columns) ? err.columns.map((c) => c.name) : undefined;
  if (err.code === "CSV_RECORD_INCONSISTENT_COLUMNS" && names && Array.isArray(err.record)) {
    // The first field the record lacks, or the first one past the header.
    const got = err.record.length;
    field = got < names.length ? names[got] : `#${names.length + 1}`;
    msg =
      got < names.length
        ? `wrong number of fields: ${got} for ${names.length} columns, the record ends before this one`
        : `wrong number of fields: ${got} for ${names.length} columns, this one is past the last column`;
  } else if (typeof err.column === "string") field = err.column;
  // Within the header (or past its last column): the field's 1-based position.
  else if (typeof err.column === "number") field = `#${err.column + 1}`;
  else if (names && Array.isArray(err.record)) field = `#${err.record.length + 1}`;
  return new DataError(path, `malformed CSV (${msg})`, { line: err.lines, field });
}

async function* readJsonl(path: string, gzip: boolean, lenient = false): AsyncGenerator<NumberedRow> {
  let line = 0;
  let buffer = "";
  const source = textStream(path, gzip, lenient);
  const parseLine = (text: string): NumberedRow | undefined => {
    line++;
    const trimmed = text.trim();
    if (trimmed === "") return undefined;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      throw new DataError(path, "not valid JSON", { line, field: jsonKeyAt(trimmed, jsonErrorAt(trimmed)) });
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new DataError(path, "each line must be a JSON object", { line });
    }
    return { line, row: value as Row };
  };
  for await (const chunk of source) {
    // Split each chunk on its own and carry only the unfinished line: appending every 64 KB chunk to the buffer
    // made V8 flatten a long concatenated string per chunk, about 8x slower on a 600 MB corpus.
    // The decoder's strings come out of the stream as Buffers, each holding whole characters.
    const lines = (typeof chunk === "string" ? chunk : (chunk as Buffer).toString("utf8")).split("\n");
    lines[0] = buffer + lines[0];
    buffer = lines.pop() ?? "";
    for (const text of lines) {
      const r = parseLine(text);
      if (r) yield r;
    }
  }
  if (buffer.length > 0) {
    const r = parseLine(buffer);
    if (r) yield r;
  }
}

/**
 * Where JSON text goes wrong: the first character whose prefix no longer parses as the start of a JSON value (V8
 * names a position only for some errors). Binary search on prefixes; only called for a line that failed to parse.
 */
export function jsonErrorAt(text: string): number {
  const broken = (n: number) => {
    try {
      JSON.parse(text.slice(0, n));
      return false;
    } catch (e) {
      // Failing at the end of the prefix (or in a string it cuts) is only being incomplete.
      const m = (e as Error).message;
      const at = /at position (\d+)/.exec(m);
      return !/end of JSON input|Unterminated string/.test(m) && !(at && Number(at[1]) >= n);
    }
  };
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (broken(mid + 1)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The top-level key of a JSON object's text at `position` (where a syntax error or a bad byte is): the key being
 * written there, or the one whose value holds it. Undefined outside the object's members or when the text is not
 * an object. Tolerates broken text (that is what it is for).
 */
export function jsonKeyAt(text: string, position: number): string | undefined {
  if (text.trimStart()[0] !== "{") return undefined;
  let depth = 0;
  let key: string | undefined;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (depth === 1 && expectKey) {
        const quoted = text.slice(i, Math.min(j + 1, text.length));
        try {
          key = JSON.parse(quoted) as string;
        } catch {
          key = quoted.slice(1).replace(/"$/, "");
        }
        expectKey = false;
      }
      if (j >= position) return depth >= 1 ? key : undefined;
      i = j;
      continue;
    }
    if (i >= position) break;
    if (c === "," && depth === 1) {
      key = undefined;
      expectKey = true;
    } else if (c === "{" || c === "[") {
      depth++;
      if (depth === 1) expectKey = true;
    } else if (c === "}" || c === "]") depth--;
  }
  return depth >= 1 ? key : undefined;
}

/**
 * The field holding the first byte that is not UTF-8 at or after `line`: the file read again, bad bytes as U+FFFD,
 * by the same parser; the first such row's cell (or header name) that holds one. Undefined when that read fails
 * before it.
 */
async function fieldOfBadByte(path: string, format: TableFormat, gzip: boolean, line: number) {
  if (format === "jsonl") {
    // The key whose value holds the first bad byte of the line (the line need not parse). Lines split on LF only,
    // as readJsonl does.
    let n = 1;
    let text = "";
    for await (const chunk of textStream(path, gzip, true)) {
      const parts = (typeof chunk === "string" ? chunk : (chunk as Buffer).toString("utf8")).split("\n");
      for (let i = 0; i < parts.length && n <= line; i++) {
        if (n === line) text += parts[i];
        if (i < parts.length - 1) n++;
      }
      if (n > line) break;
    }
    const at = text.indexOf("\uFFFD");
    return at < 0 ? undefined : jsonKeyAt(text, at);
  }
  try {
    for await (const r of readCsvParse(path, gzip, format === "tsv" ? "\t" : ",", true)) {
      const keys = Object.keys(r.row);
      const named = keys.find((k) => k.includes("\uFFFD"));
      if (named !== undefined) return named;
      if (r.line < line) continue;
      const field = keys.find((k) => String(r.row[k] ?? "").includes("\uFFFD"));
      if (field !== undefined) return field;
    }
  } catch (e) {
    // The bad byte broke the record's syntax too: that error's field; any other, the field stays unknown.
    if (e instanceof DataError && e.line === line) return e.field;
  }
  return undefined;
}

const PARQUET_SLICE_ROWS = 4096;

/** Streams a Parquet file in slices of rows, so memory stays bounded whatever the row-group size. */
async function* readParquet(
  path: string,
  columns?: string[],
  sliceRows = PARQUET_SLICE_ROWS,
): AsyncGenerator<NumberedRow> {
  let file: Awaited<ReturnType<typeof asyncBufferFromFile>>;
  let metadata: Awaited<ReturnType<typeof parquetMetadataAsync>>;
  try {
    file = await asyncBufferFromFile(path);
    metadata = await parquetMetadataAsync(file);
  } catch (e) {
    throw new DataError(path, `not a readable Parquet file (${(e as Error).message})`);
  }
  const present = new Set(metadata.schema.slice(1).map((s) => s.name));
  const wanted = columns?.filter((c) => present.has(c));
  // Slices of a few thousand rows: a whole row group of a large file can hold gigabytes of text, and hyparquet
  // uses the page index to decode only the pages a slice needs.
  const total = Number(metadata.num_rows);
  // Damaged metadata can claim any row count: trust it only when the row groups add up to it.
  const grouped = metadata.row_groups.reduce((n, g) => n + Number(g.num_rows), 0);
  if (!Number.isSafeInteger(total) || total < 0 || grouped !== total)
    throw new DataError(path, `damaged Parquet metadata (${total} rows, but its row groups hold ${grouped})`);
  // hyparquet trusts the offsets, sizes and counts of the chunks and pages it reads, and spins forever on some
  // damaged ones: they are checked first.
  await checkParquetLayout(path, file, metadata, wanted);
  for (let rowStart = 0; rowStart < total; rowStart += sliceRows) {
    const rowEnd = Math.min(total, rowStart + sliceRows);
    let rows: Record<string, unknown>[];
    try {
      rows = await parquetReadObjects({ file, metadata, rowStart, rowEnd, columns: wanted });
    } catch (e) {
      // A damaged page: the rows of the slice are unknown, so the first one is named.
      throw new DataError(
        path,
        `damaged Parquet data in rows ${rowStart + 1}-${rowEnd} (${(e as Error).message})`,
        {
          line: rowStart + 1,
        },
      );
    }
    if (rows.length !== rowEnd - rowStart)
      throw new DataError(
        path,
        `damaged Parquet data: rows ${rowStart + 1}-${rowEnd} gave ${rows.length} rows`,
        {
          line: rowStart + 1,
        },
      );
    for (let i = 0; i < rows.length; i++) yield { line: rowStart + i + 1, row: rows[i] as Row };
  }
}

export interface ReadTableOptions {
  /** Parquet only: read just these columns (others are never decoded). */
  columns?: string[];
  /** Parquet only: rows decoded at a time (memory bound). */
  parquetSliceRows?: number;
}

/** Streams the rows of a CSV, JSONL or Parquet file (plain or .gz for CSV and JSONL). */
export async function* readTable(path: string, options: ReadTableOptions = {}): AsyncGenerator<NumberedRow> {
  const { format, gzip } = tableFormat(path);
  await assertReadable(path);
  if (format === "parquet") {
    yield* readParquet(path, options.columns, options.parquetSliceRows);
    return;
  }
  try {
    if (format === "csv") yield* readCsv(path, gzip);
    // Tab-separated (GWSD): csv-parse only, with the same quoting rules.
    else if (format === "tsv") yield* readCsvParse(path, gzip, "\t");
    else yield* readJsonl(path, gzip);
  } catch (e) {
    if (!(e instanceof NotUtf8) || e.line === undefined) throw e;
    const field = await fieldOfBadByte(path, format, gzip, e.line);
    throw new DataError(path, e.reason, { line: e.line, field });
  }
}

/** Reads a whole table and checks that it is not empty. */
export async function readAll(path: string, options: ReadTableOptions = {}): Promise<NumberedRow[]> {
  const rows: NumberedRow[] = [];
  for await (const r of readTable(path, options)) rows.push(r);
  if (rows.length === 0) throw new DataError(path, "the file has no rows");
  return rows;
}

/** A cell as a trimmed string; undefined when absent or empty. */
export function cellString(value: Cell): string | undefined {
  if (value === null || value === undefined) return undefined;
  const s = (typeof value === "object" ? JSON.stringify(value) : String(value)).trim();
  return s === "" ? undefined : s;
}

/** A required string field, or a DataError naming file, line and field. */
export function requireString(file: string, r: NumberedRow, field: string): string {
  if (!(field in r.row)) throw new DataError(file, "missing column", { line: r.line, field });
  const s = cellString(r.row[field]);
  if (s === undefined) throw new DataError(file, "empty value", { line: r.line, field });
  return s;
}

/** Checks that the first row has every required column (one clear error instead of one per row). */
export function requireColumns(file: string, first: NumberedRow | undefined, columns: string[]): void {
  if (!first) throw new DataError(file, "the file has no rows");
  for (const c of columns) {
    if (!(c in first.row)) {
      throw new DataError(file, `missing column (found: ${Object.keys(first.row).join(", ")})`, {
        line: first.line,
        field: c,
      });
    }
  }
}

/**
 * Writes a CSV file atomically: rows go to a temporary file beside the target, which is renamed over it at the
 * end, so an interrupted write never leaves a half-written or corrupted file.
 */
export async function writeCsv(
  path: string,
  header: string[],
  rows: Iterable<unknown[]> | AsyncIterable<unknown[]>,
): Promise<void> {
  await mkdir(dirname(path) || ".", { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    const out = stringify({ header: true, columns: header, record_delimiter: "\n" });
    const done = pipeline(out, createWriteStream(tmp));
    for await (const row of rows) {
      if (!out.write(row)) await new Promise<void>((r) => out.once("drain", () => r()));
    }
    out.end();
    await done;
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/** Writes JSON Lines atomically (same temp-then-rename rule as writeCsv). */
export async function writeJsonl(
  path: string,
  rows: Iterable<unknown> | AsyncIterable<unknown>,
): Promise<void> {
  await mkdir(dirname(path) || ".", { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    const out = createWriteStream(tmp);
    for await (const row of rows) {
      if (!out.write(`${JSON.stringify(row)}\n`))
        await new Promise<void>((r) => out.once("drain", () => r()));
    }
    await new Promise<void>((resolve, reject) => {
      out.on("error", reject);
      out.end(() => resolve());
    });
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/** Writes a whole file (bytes or text) atomically (same temp-then-rename rule as writeCsv). */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path) || ".", { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    await writeFile(tmp, data);
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
