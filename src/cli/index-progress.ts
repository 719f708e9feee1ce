/** The index a product command uses: --index, else the default index, built first with a progress bar. */
import cliProgress from "cli-progress";
import { type DefaultIndexProgress, ensureDefaultIndex } from "../pipeline/default-index.ts";

export async function indexWithProgress(index?: string): Promise<string> {
  if (index) return index;
  const tty = process.stderr.isTTY === true;
  let bar: cliProgress.SingleBar | undefined;
  let step = 0;
  const onProgress = (p: DefaultIndexProgress) => {
    if (p.step !== step) {
      bar?.stop();
      step = p.step;
      process.stderr.write(`building the default index (${p.step}/${p.steps}): ${p.corpus}\n`);
      bar = tty
        ? new cliProgress.SingleBar(
            {
              format:
                "index |{bar}| {percentage}% line {value}/{total} · {added} added · ETA {eta_formatted}",
              stream: process.stderr,
              etaBuffer: 200,
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
      bar?.start(p.total ?? 0, 0, { added: 0 });
    }
    bar?.update(p.line, { added: p.added });
  };
  try {
    return await ensureDefaultIndex(onProgress);
  } finally {
    bar?.stop();
  }
}
