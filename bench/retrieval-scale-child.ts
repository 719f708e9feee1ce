/**
 * Child process of the retrieval-scale benchmark, so peak memory is that of one job alone:
 * `ingest CORPUS DIR` or `query DIR CLAIMS_JSON`; prints one JSON line of figures.
 */
import { readFileSync } from "node:fs";
import { ingest } from "../src/index/ingest.ts";
import { openIndex } from "../src/index/open.ts";
import { FAMILIES } from "../src/retrieval/features.ts";
import { Retriever } from "../src/retrieval/retriever.ts";

const maxRssMiB = () => process.resourceUsage().maxRSS / 1024;
const [cmd, a, b] = process.argv.slice(2);

if (cmd === "ingest") {
  const t = performance.now();
  const r = await ingest(a, b);
  console.log(
    JSON.stringify({ seconds: (performance.now() - t) / 1000, total: r.total, maxRssMiB: maxRssMiB() }),
  );
} else if (cmd === "query") {
  const t0 = performance.now();
  const index = openIndex(a);
  const openSeconds = (performance.now() - t0) / 1000;
  const claims = JSON.parse(readFileSync(b, "utf8")) as string[];
  const r = new Retriever(index);
  const families = FAMILIES.filter((f) => f === "lexical" || f === "coverage" || f === "numbers");
  const once = async (c: string) => {
    const [s] = await r.stage1([c]);
    r.features(s, families, 100);
  };
  for (const c of claims.slice(0, 10)) await once(c);
  const times: number[] = [];
  for (const c of claims.slice(10)) {
    const t = performance.now();
    await once(c);
    times.push(performance.now() - t);
  }
  times.sort((x, y) => x - y);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))];
  // Exhaustive dense search cost over the same number of 512-d vectors (values do not change the cost).
  const n = index.docs.size;
  const dim = 512;
  const data = new Float32Array(n * dim);
  for (let i = 0; i < data.length; i++) data[i] = ((i * 2654435761) % 1000) / 1000 - 0.5;
  const q = data.slice(0, dim);
  const scores = new Float32Array(n);
  const dense: number[] = [];
  for (let rep = 0; rep < 6; rep++) {
    const t = performance.now();
    for (let d = 0, base = 0; d < n; d++, base += dim) {
      let s = 0;
      for (let j = 0; j < dim; j++) s += q[j] * data[base + j];
      scores[d] = s;
    }
    if (rep > 0) dense.push(performance.now() - t);
  }
  dense.sort((x, y) => x - y);
  console.log(
    JSON.stringify({
      openSeconds,
      p50: pct(50),
      p95: pct(95),
      queries: times.length,
      denseMs: dense[2],
      maxRssMiB: maxRssMiB(),
    }),
  );
  index.close();
}
