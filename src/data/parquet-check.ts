/**
 * Checks what hyparquet would trust in a Parquet file before it decodes anything: hyparquet 1.33.0 reads a damaged
 * file's offsets, sizes and counts as given, and on some of them spins forever, synchronously (a data page v2
 * header without its level lengths sets its read offset to NaN, and a DataView read at NaN is a read at 0 that
 * never advances). So every column chunk to be read must lie inside the file's data, and each of its page headers
 * must parse, fit the chunk and carry whole, non-negative sizes and counts that add up to the chunk's.
 */
import {
  type AsyncBuffer,
  type FileMetaData,
  type PageHeader,
  parquetSchema,
  type SchemaTree,
} from "hyparquet";
import { parquetHeader } from "hyparquet/src/column.js";
import { DataError } from "./errors.ts";

/** Header bytes read at a time; grown when a page header (its statistics can hold long values) is longer. */
const HEADER_PROBE = 4096;

const whole = (n: unknown): n is number | bigint =>
  (typeof n === "number" && Number.isSafeInteger(n) && n >= 0) ||
  (typeof n === "bigint" && n >= 0n && n <= BigInt(Number.MAX_SAFE_INTEGER));

/**
 * Refuses, with a DataError naming the row group and column, a file whose column chunks (only `columns` when
 * given) or page headers hyparquet could not read safely.
 */
export async function checkParquetLayout(
  path: string,
  file: AsyncBuffer,
  metadata: FileMetaData,
  columns?: string[],
): Promise<void> {
  // Column chunks lie between the leading magic and the footer (metadata, its length and the trailing magic).
  const dataEnd = file.byteLength - 8 - metadata.metadata_length;
  let schema: SchemaTree;
  try {
    schema = parquetSchema(metadata);
  } catch (e) {
    throw new DataError(path, `damaged Parquet schema (${(e as Error).message})`);
  }
  for (const [g, group] of metadata.row_groups.entries()) {
    for (const chunk of group.columns) {
      const meta = chunk.meta_data;
      const name = meta?.path_in_schema?.join(".") ?? "?";
      const refuse = (why: string): never => {
        throw new DataError(path, `damaged Parquet file: row group ${g + 1}, column ${name}: ${why}`, {
          field: name,
        });
      };
      if (!meta) refuse("no column metadata");
      if (!meta || (columns && !columns.includes(meta.path_in_schema[0]))) continue;
      if (chunk.file_path) refuse("data in another file is not supported");
      // A chunk of a column the schema lacks: hyparquet throws while its other chunks are being read, and their
      // failures then go unhandled (the process dies).
      const leaf = schemaLeaf(schema, meta.path_in_schema);
      if (!leaf) refuse("column not in the file's schema");
      const start = meta.dictionary_page_offset || meta.data_page_offset;
      if (!whole(start) || !whole(meta.total_compressed_size) || !whole(meta.num_values))
        refuse("column chunk offset, size or value count is not a whole number");
      const from = Number(start);
      const to = from + Number(meta.total_compressed_size);
      if (from < 4 || to > dataEnd) refuse(`column chunk (bytes ${from}-${to}) lies outside the file's data`);
      const values = Number(meta.num_values);
      if (leaf?.flat && values !== Number(group.num_rows))
        refuse(`${values} values, but the row group has ${group.num_rows} rows`);
      await checkPages(file, from, to, values, refuse);
    }
  }
}

/** The schema leaf a chunk's path names, and whether it is a flat column (one value per row); undefined if none. */
function schemaLeaf(tree: SchemaTree, path: string[]): { flat: boolean } | undefined {
  let node = tree;
  for (const part of path) {
    const child = node.children.find((c) => c.element.name === part);
    if (!child) return undefined;
    node = child;
  }
  if (node === tree || node.children.length > 0) return undefined;
  return { flat: path.length === 1 && node.element.repetition_type !== "REPEATED" };
}

async function checkPages(
  file: AsyncBuffer,
  from: number,
  to: number,
  values: number,
  refuse: (why: string) => never,
): Promise<void> {
  let at = from;
  let seen = 0;
  // hyparquet stops reading a chunk when less than 2 bytes are left.
  while (at < to - 1) {
    const header = await readHeader(file, at, to, refuse);
    const where = `page at byte ${at}`;
    if (!whole(header.page.compressed_page_size) || !whole(header.page.uncompressed_page_size))
      refuse(`${where}: page size is not a whole number`);
    const size = Number(header.page.compressed_page_size);
    const body = at + header.length;
    if (body + size > to) refuse(`${where}: page of ${size} bytes runs past the end of its column chunk`);
    const h = header.page;
    if (h.type === "DICTIONARY_PAGE") {
      if (!h.dictionary_page_header || !whole(h.dictionary_page_header.num_values))
        refuse(`${where}: dictionary page without a value count`);
    } else if (h.type === "DATA_PAGE") {
      const d = h.data_page_header;
      if (!d || !whole(d.num_values) || d.encoding === undefined)
        refuse(`${where}: data page without a value count or encoding`);
      seen += Number(d?.num_values);
    } else if (h.type === "DATA_PAGE_V2") {
      const d = h.data_page_header_v2;
      if (
        !d ||
        !whole(d.num_values) ||
        !whole(d.num_nulls) ||
        !whole(d.num_rows) ||
        !whole(d.definition_levels_byte_length) ||
        !whole(d.repetition_levels_byte_length) ||
        d.encoding === undefined
      )
        refuse(`${where}: data page (v2) without its counts, level lengths or encoding`);
      if (d && d.num_nulls > d.num_values) refuse(`${where}: more nulls than values`);
      if (d && d.definition_levels_byte_length + d.repetition_levels_byte_length > size)
        refuse(`${where}: level lengths exceed the page`);
      seen += Number(d?.num_values);
    } else refuse(`${where}: unsupported page type ${h.type ?? "(none)"}`);
    if (seen > values) refuse(`its pages hold more than the ${values} values of the column chunk`);
    at = body + size;
  }
  if (seen !== values) refuse(`its pages hold ${seen} values, its metadata says ${values}`);
}

/** The page header at `at` and its length in bytes. */
async function readHeader(
  file: AsyncBuffer,
  at: number,
  to: number,
  refuse: (why: string) => never,
): Promise<{ page: PageHeader; length: number }> {
  for (let probe = HEADER_PROBE; ; probe *= 4) {
    const end = Math.min(to, at + probe);
    const bytes = await file.slice(at, end);
    const reader = { view: new DataView(bytes), offset: 0 };
    try {
      const page = parquetHeader(reader);
      if (reader.offset <= bytes.byteLength) return { page, length: reader.offset };
    } catch (e) {
      // Past the end of the probe: read more, unless the chunk itself ends there.
      if (!(e instanceof RangeError) || end >= to)
        refuse(`page at byte ${at}: unreadable page header (${(e as Error).message})`);
      continue;
    }
    if (end >= to) refuse(`page at byte ${at}: page header runs past the end of its column chunk`);
  }
}
