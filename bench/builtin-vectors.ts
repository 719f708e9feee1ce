/**
 * Writes corpus/arxiv-climate.use-lite.f32.gz: the USE-lite vectors of the built-in corpus's abstracts (the text
 * ingest embeds for them, in file order), so a first run need not encode them. Run again when the corpus, the
 * model or the text recipe change: `node --import tsx bench/builtin-vectors.ts` (a test fails until then).
 */
import { rename, writeFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { BUILTIN_CORPUS } from "../src/data/builtin-corpus.ts";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { builtinUseTexts } from "../src/pipeline/default-index.ts";

const texts = await builtinUseTexts();
const use = await openUseLite({ workers: 2, cacheDir: false });
try {
  const started = performance.now();
  const vectors = await use.embed(texts);
  const flat = new Float32Array(texts.length * use.dim);
  for (const [i, x] of vectors.entries()) flat.set(x, i * use.dim);
  // gzip without a name or time: the same vectors give the same bytes.
  const out = BUILTIN_CORPUS.vectors.path;
  await writeFile(`${out}.tmp`, gzipSync(new Uint8Array(flat.buffer), { level: 9 }));
  await rename(`${out}.tmp`, out);
  const s = (performance.now() - started) / 1000;
  process.stderr.write(`wrote ${texts.length} vectors of ${use.name} to ${out} (${s.toFixed(1)} s)\n`);
} finally {
  await use.close();
}
