/** Lines of a text corpus (or rows of a Parquet file): the progress bar's total, since rows carry line numbers. */
import { createReadStream } from "node:fs";
import { createGunzip } from "node:zlib";
import { asyncBufferFromFile, parquetMetadataAsync } from "hyparquet";
import { tableFormat } from "../data/tables.ts";

export async function countLines(path: string): Promise<number | undefined> {
  try {
    const { format, gzip } = tableFormat(path);
    if (format === "parquet") {
      const meta = await parquetMetadataAsync(await asyncBufferFromFile(path));
      return Number(meta.num_rows);
    }
    const raw = createReadStream(path);
    const stream = gzip ? raw.pipe(createGunzip()) : raw;
    let lines = 0;
    let last = 10;
    for await (const chunk of stream) {
      const buf = chunk as Buffer;
      for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) lines++;
      if (buf.length) last = buf[buf.length - 1];
    }
    // A last line without a newline counts too.
    return last === 10 ? lines : lines + 1;
  } catch {
    // The reader reports unreadable files properly; the bar just goes without a total.
    return undefined;
  }
}
