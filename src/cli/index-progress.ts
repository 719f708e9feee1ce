/**
 * Progress of index building: a bar on a terminal, else one line every few seconds (done/total, rate, ETA), so a
 * first run under a pipe, a service manager or CI still says what it is doing. And the index a product command
 * uses: --index, else the default index, built first with that progress.
 */
import cliProgress from "cli-progress";
import { BUILTIN_CORPUS } from "../data/builtin-corpus.ts";
import { addVectorSets, type DefaultIndexProgress, ensureDefaultIndex } from "../pipeline/default-index.ts";
import { openByoRetrieval, type RetrievalConfig } from "../retrieval/byo.ts";
import { openEncoders } from "../retrieval/encoders.ts";

export interface IngestReporter {
  /** `line`: the corpus line (or Parquet row) reached, of `total` when known; `added`: abstracts indexed. */
  update(line: number, added: number): void;
  stop(): void;
}

export interface ReporterOptions {
  stream?: Pick<NodeJS.WriteStream, "write"> & { isTTY?: boolean };
  /** Seconds between lines when not on a terminal (default 5). */
  everySeconds?: number;
  /** Milliseconds clock (tests pass their own). */
  now?: () => number;
}

const seconds = (s: number) =>
  s >= 3600
    ? `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`
    : s >= 90
      ? `${Math.round(s / 60)} min`
      : `${Math.round(s)} s`;

export function ingestReporter(
  label: string,
  total: number | undefined,
  options: ReporterOptions = {},
): IngestReporter {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? Date.now;
  const started = now();
  const rate = (added: number) => added / Math.max((now() - started) / 1000, 1e-3);
  if (stream.isTTY === true) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${label} |{bar}| {percentage}% line {value}/{total} · {added} added · {rate}/s · ETA {eta_formatted}`,
        stream: stream as NodeJS.WriteStream,
        etaBuffer: 200,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total ?? 0, 0, { added: 0, rate: "0" });
    return {
      update: (line, added) => bar.update(line, { added, rate: rate(added).toFixed(0) }),
      stop: () => bar.stop(),
    };
  }
  const every = (options.everySeconds ?? 5) * 1000;
  let last = started;
  let latest: [number, number] | undefined;
  let printed: [number, number] | undefined;
  const print = ([line, added]: [number, number]) => {
    printed = latest;
    const r = rate(added);
    const parts = [total ? `${line}/${total} lines (${Math.floor((100 * line) / total)}%)` : `line ${line}`];
    parts.push(`${added} added`, `${r.toFixed(1)}/s`);
    if (total && r > 0 && line < total)
      parts.push(`ETA ${seconds((total - line) / (line / ((now() - started) / 1000)))}`);
    stream.write(`${label}: ${parts.join(" · ")}\n`);
  };
  return {
    update(line, added) {
      latest = [line, added];
      if (now() - last >= every) {
        last = now();
        print(latest);
      }
    },
    // The last state is always printed once, so a log ends on the final count.
    stop() {
      if (latest && latest !== printed) print(latest);
      latest = undefined;
    },
  };
}

/**
 * `--index`, else the default index (built first, with progress). With a profile whose retrieval has a dense model,
 * the default index gets that model's vector set first when it lacks it (embedded with progress), so `serve
 * --profile NAME` runs without a separate ingest.
 */
export async function indexWithProgress(index?: string, retrieval?: RetrievalConfig): Promise<string> {
  if (index) return index;
  const dir = await buildDefaultIndex();
  if (retrieval?.backend === "onnx" && retrieval.dense) {
    const name = retrieval.dense.name ?? "dense";
    await addVectorSets(
      dir,
      [name],
      async () => {
        const byo = await openByoRetrieval(retrieval, true);
        const builtin = await openEncoders({ workers: 2 }).catch(async (e) => {
          await byo.close();
          throw e;
        });
        return {
          specs: [...builtin.specs, ...byo.specs],
          close: async () => {
            await builtin.close();
            await byo.close();
          },
        };
      },
      (docs) =>
        process.stderr.write(
          `embedding the default index's ${docs} abstracts with the profile's dense model (vector set ${name}), once; an interruption resumes\n`,
        ),
    );
  }
  return dir;
}

async function buildDefaultIndex(): Promise<string> {
  let reporter: IngestReporter | undefined;
  let step = 0;
  const onProgress = (p: DefaultIndexProgress) => {
    if (p.step !== step) {
      reporter?.stop();
      step = p.step;
      const what =
        p.corpus === BUILTIN_CORPUS.path
          ? `the built-in demo corpus (${BUILTIN_CORPUS.abstracts} arXiv climate-science abstracts; first run only)`
          : p.corpus;
      process.stderr.write(`building the default index (${p.step}/${p.steps}) from ${what}\n`);
      reporter = ingestReporter("index", p.total);
    }
    reporter?.update(p.line, p.added);
  };
  try {
    return await ensureDefaultIndex(onProgress);
  } finally {
    reporter?.stop();
  }
}
