/**
 * `npm run bench -- reliability`: `serve` (one process, default limits) on the default index of the built-in
 * corpus, under normal load (4 clients checking claims back to back) alone, then beside 500 slow connections held
 * open (half send their headers a byte every 2 s, half send headers and part of a body and stall; each one the
 * server cuts is opened again). Figures: p50/p95 of the normal requests and their errors in each phase, and how
 * many slow connections the server cut. The fault tests (kill, restart, torn files, full disk) are listed with
 * the command that runs them; they pass in `npm test`.
 */
import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { tempDir } from "../test/retrieval-fixtures.ts";
import { type Bench, loadAverage, table } from "./report.ts";

const SLOW = 500;
const PHASE_S = 30;
const CLIENTS = 4;
const CLAIMS = [
  "Sea level rise is accelerating",
  "The sun is the main driver of recent warming",
  "Arctic sea ice is declining",
  "CO2 is plant food",
  "Climate models overestimate warming",
  "Extreme rainfall increases with warming",
];
const log = (m: string) => process.stderr.write(`reliability: ${m}\n`);

async function startServe(home: string): Promise<{ url: string; stop(): void }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/main.ts", "serve", "--port", "0", "--workers", "1"],
    { env: { ...process.env, CLIMATECHECK_HOME: home }, stdio: ["ignore", "ignore", "pipe"] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let buf = "";
    child.stderr.on("data", (d: Buffer) => {
      buf += d.toString();
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.includes('"listening"')) resolve(JSON.parse(line).url);
      }
    });
    child.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
  });
  return { url, stop: () => child.kill("SIGTERM") };
}

/** Normal clients for `seconds`: latencies of the answered requests (ms) and the errors. */
async function normalLoad(url: string, seconds: number): Promise<{ ms: number[]; errors: number }> {
  const end = Date.now() + seconds * 1000;
  const ms: number[] = [];
  let errors = 0;
  let n = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < end) {
        const claim = `${CLAIMS[n++ % CLAIMS.length]} (${n})`;
        const t = performance.now();
        try {
          const res = await fetch(`${url}/v1/check`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ claim, k: 5 }),
          });
          await res.arrayBuffer();
          if (res.status === 200) ms.push(performance.now() - t);
          else errors++;
        } catch {
          errors++;
        }
      }
    }),
  );
  return { ms, errors };
}

/** Holds `count` slow connections open until stop(); counts those the server closed. */
function slowClients(url: string, count: number) {
  const { hostname, port } = new URL(url);
  const cut = { headers: 0, body: 0 };
  let stopped = false;
  const sockets = new Set<Socket>();
  const open = (i: number) => {
    if (stopped) return;
    const s = connect(Number(port), hostname);
    sockets.add(s);
    let timer: NodeJS.Timeout | undefined;
    s.on("error", () => {});
    s.once("connect", () => {
      if (i % 2 === 0) {
        const head = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: abcdefghijklmnopqrstuvwxyz\r\n";
        let at = 0;
        timer = setInterval(() => s.write(head[at++ % head.length]), 2000);
      } else
        s.write(
          'POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"claim": "',
        );
    });
    s.once("close", () => {
      clearInterval(timer);
      sockets.delete(s);
      if (stopped) return;
      cut[i % 2 === 0 ? "headers" : "body"]++;
      setTimeout(() => open(i), 50);
    });
  };
  for (let i = 0; i < count; i++) open(i);
  return {
    cut: () => ({ ...cut }),
    open: () => sockets.size,
    stop() {
      stopped = true;
      for (const s of sockets) s.destroy();
    },
  };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : Number.NaN;
};

export const bench: Bench = async () => {
  const server = await startServe(tempDir("cc-bench-rel-"));
  log(`serve at ${server.url}`);
  try {
    await normalLoad(server.url, 5); // warm-up
    log(`normal load alone, ${PHASE_S} s`);
    const alone = await normalLoad(server.url, PHASE_S);
    const slow = slowClients(server.url, SLOW);
    await new Promise((r) => setTimeout(r, 2000));
    const heldAtStart = slow.open();
    log(`normal load beside ${SLOW} slow connections (${heldAtStart} open), ${PHASE_S} s`);
    const before = slow.cut();
    const beside = await normalLoad(server.url, PHASE_S);
    const after = slow.cut();
    const cut = { headers: after.headers - before.headers, body: after.body - before.body };
    const held = slow.open();
    slow.stop();
    const row = (name: string, r: { ms: number[]; errors: number }) => [
      name,
      r.ms.length,
      r.errors,
      pct(r.ms, 50).toFixed(1),
      pct(r.ms, 95).toFixed(1),
    ];
    return {
      id: "reliability",
      title: "Reliability: serve beside 500 slow connections, and the faults survived (issue 25)",
      command: "npm run bench -- reliability",
      markdown: [
        `\`climatecheck serve --workers 1\` with its default limits (headers 10 s, body 30 s, idle 5 s, at most 1,024 connections) on the default index of the built-in corpus; ${CLIENTS} clients POST /v1/check (k = 5) back to back for ${PHASE_S} s, alone and then beside ${SLOW} slow connections (half send headers a byte every 2 s, half send headers and 11 bytes of a 100,000-byte body and stall; each cut by the server is reopened). Load average ${loadAverage()} (other jobs share the machine).`,
        "",
        table(
          ["phase", "answered", "errors", "p50 ms", "p95 ms"],
          [row("normal load alone", alone), row(`beside ${SLOW} slow connections`, beside)],
        ),
        "",
        `Slow connections open when the measured phase began: ${heldAtStart}; at its end: ${held}; cut by the server during it and reopened: ${cut.headers} of the slow-header half (headers timeout, 408), ${cut.body} of the stalled-body half (body timeout).`,
        "",
        "Faults injected and survived (each in `npm test`; run alone with the command shown):",
        "",
        table(
          ["fault", "what must hold", "command"],
          [
            [
              "ingest SIGKILLed at 24 seeded points over every phase (commits, BM25 files, offsets, IVF lists, manifest), fresh and extending an index",
              "the index opens as the last complete one or refuses with a clear error; a rerun equals an uninterrupted ingest (content fingerprint, top 10 of 10 claims, BM25 and dense)",
              "`node --import tsx --test test/index-crash.test.ts`",
            ],
            [
              "each index file truncated or one byte flipped (16 cases)",
              "open stops with a DataError naming the file (torn or truncated / checksum)",
              "same file",
            ],
            [
              "full disk (file size limit) during ingest",
              "one line, exit 1; a rerun resumes to the same index",
              "same file",
            ],
            [
              "Redis SIGKILLed and restarted (AOF) mid-run, with a worker and a waiting collect",
              "no chunk lost or done twice; both collected files byte-identical to predict's",
              "`node --import tsx --test test/queue.test.ts`",
            ],
            [
              "the only worker refuses the run (another index)",
              "status and collect --wait say so; collect --wait --timeout exits 2 with the reason",
              "same file",
            ],
            [
              "damaged Parquet files hyparquet 1.33.0 spins on (a page header without its level lengths) or dies on (a chunk of a column the schema lacks)",
              "a one-line DataError naming the file, row group and column; no hang, no crash",
              "`node --import tsx --test test/parquet-damaged.test.ts`",
            ],
            [
              "30 reads stopped part way by bad input (JSONL, CSV through the fallback parser, gzipped CSV)",
              "no file descriptor left open",
              "`node --import tsx --test test/data-formats.test.ts`",
            ],
            [
              "slow headers, unfinished body, idle keep-alive, connections past the cap",
              "each closed by the server; real requests answered meanwhile",
              "`node --import tsx --test test/server-slow.test.ts`",
            ],
          ],
        ),
      ].join("\n"),
    };
  } finally {
    server.stop();
  }
};
