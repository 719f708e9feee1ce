/**
 * `queue` throughput: task 1 over the same claims with single-process `predict`, one `queue work` process and two,
 * each from a cold sentence-vector cache (processes timed end to end, model loading included); the queue's own cost
 * per chunk with a no-op processor; Redis commands, CPU and bytes per claim; and from those, the number of machines
 * at which the one Redis becomes the limit.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { connectRedis, QUEUE_PREFIX } from "../src/queue/redis.ts";
import { runStatus } from "../src/queue/status.ts";
import { startRedis } from "../test/redis-fixture.ts";
import { benchIndex, coldCache, writeBenchClaims } from "./predict.ts";
import { type Bench, loadAverage, table } from "./report.ts";

const CLAIMS = 480;
const CHUNK = 16;
const K = 10;
const NOOP_CHUNKS = 2000;
const IDLE_MS = 10_000;
/** predict --task 1 on an unloaded 2-core machine (BENCHMARKS.md, "predict": 1,000 claims, default lanes). */
const PREDICT_BENCH_RATE = 27.3;
const log = (m: string) => process.stderr.write(`  ${m}\n`);
const CLI = ["--import", "tsx", "src/cli/main.ts"];

/**
 * A CLI process; `done` gives its stdout and CPU seconds (user + system, its threads and children included, from
 * bash's `times`), so runs at different machine loads compare by CPU per claim.
 */
function run(args: string[]): { child: ChildProcess; done: Promise<{ out: string; cpu: number }> } {
  const script = 'node "$@"; rc=$?; times >&3; exit $rc';
  const child = spawn("bash", ["-c", script, "bash", ...CLI, ...args], {
    env: { ...process.env },
    stdio: ["ignore", "pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let times = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    err += d;
  });
  child.stdio[3]?.on("data", (d) => {
    times += d;
  });
  const seconds = (t: string) => {
    const m = /(\d+)m([\d.]+)s/.exec(t);
    return m ? 60 * Number(m[1]) + Number(m[2]) : 0;
  };
  const done = new Promise<{ out: string; cpu: number }>((resolve, reject) =>
    child.once("close", (code) => {
      if (code !== 0) reject(new Error(`${args.slice(0, 2).join(" ")} exited ${code}: ${err.slice(-800)}`));
      // The second line of `times`: the children's user and system time.
      const [user, system] = (times.trim().split("\n")[1] ?? "").split(" ");
      resolve({ out, cpu: seconds(user ?? "") + seconds(system ?? "") });
    }),
  );
  return { child, done };
}

interface RedisCounters {
  commands: number;
  cpu: number;
  bytes: number;
}

async function counters(redis: Redis): Promise<RedisCounters> {
  const field = (text: string, name: string) =>
    Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(text)?.[1] ?? 0);
  const stats = await redis.info("stats");
  const cpu = await redis.info("cpu");
  return {
    commands: field(stats, "total_commands_processed"),
    cpu: field(cpu, "used_cpu_user") + field(cpu, "used_cpu_sys"),
    bytes: field(stats, "total_net_input_bytes") + field(stats, "total_net_output_bytes"),
  };
}

const minus = (a: RedisCounters, b: RedisCounters): RedisCounters => ({
  commands: a.commands - b.commands,
  cpu: a.cpu - b.cpu,
  bytes: a.bytes - b.bytes,
});

/** No-op chunks with task 1 sized data and results: what the queue alone costs per chunk. */
async function usedMemory(redis: Redis): Promise<number> {
  return Number(/^used_memory:(\d+)/m.exec(await redis.info("memory"))?.[1] ?? 0);
}

async function noop(
  redis: Redis,
  concurrency: number,
): Promise<{ perChunkMs: number; cost: RedisCounters; bytesPerChunk: number }> {
  const name = `noop-${concurrency}`;
  const data = {
    chunk: 0,
    claims: Array.from({ length: CHUNK }, (_, i) => ({ id: `claim-${i}`, text: "x".repeat(120) })),
  };
  const result = data.claims.map(() =>
    Array.from({ length: K }, (_, r) => [`abstract-${r}-0000`, "Not Enough Information"]),
  );
  const queue = new Queue(name, { connection: redis, prefix: QUEUE_PREFIX });
  const memory = await usedMemory(redis);
  for (let c = 0; c < NOOP_CHUNKS; c += 500)
    await queue.addBulk(
      Array.from({ length: 500 }, (_, i) => ({ name: "chunk", data, opts: { jobId: `chunk-${c + i}` } })),
    );
  const before = await counters(redis);
  const t0 = Date.now();
  let done = 0;
  const finished = new Promise<void>((resolve) => {
    const worker = new Worker(name, async () => result, {
      connection: redis,
      prefix: QUEUE_PREFIX,
      concurrency,
    });
    worker.on("completed", () => {
      if (++done === NOOP_CHUNKS) void worker.close().then(resolve);
    });
  });
  await finished;
  const seconds = (Date.now() - t0) / 1000;
  const cost = minus(await counters(redis), before);
  // Completed chunks stay (collect reads them): what a run keeps in Redis memory until it is removed.
  const bytesPerChunk = ((await usedMemory(redis)) - memory) / NOOP_CHUNKS;
  await queue.obliterate({ force: true });
  await queue.close();
  return { perChunkMs: (1000 * seconds) / NOOP_CHUNKS, cost, bytesPerChunk };
}

export const bench: Bench = async () => {
  const tmp = await mkdtemp(join(tmpdir(), "bench-queue-"));
  const home = process.env.CLIMATECHECK_HOME;
  const server = await startRedis({ aof: "everysec" });
  const redis = await connectRedis(server.url, { worker: true });
  try {
    const claimsFile = join(tmp, "claims.csv");
    await writeBenchClaims(claimsFile, CLAIMS);
    // Redis's own background work (server cron, AOF fsync), to leave out of what workers cost it.
    const idle0 = await counters(redis);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = minus(await counters(redis), idle0);
    const idleCpuPerSecond = idle.cpu / (IDLE_MS / 1000);
    // First, the queue alone (fails fast, before the long runs).
    log("no-op chunks");
    const serial = await noop(redis, 1);
    const parallel = await noop(redis, 16);
    log(`no-op: ${serial.perChunkMs.toFixed(2)} ms/chunk serial, ${parallel.perChunkMs.toFixed(2)} at 16`);
    log("index");
    const index = await benchIndex(tmp);
    const loadStart = loadAverage();
    const rows: (string | number)[][] = [];

    const predictOut = join(tmp, "predict.csv");
    const predictRuns: { seconds: number; cpu: number }[] = [];
    const predict = async (when: string) => {
      log(`predict (${when})`);
      await coldCache(tmp, `predict-${when}`);
      const t0 = Date.now();
      const args = [
        "predict",
        "--task",
        "1",
        "--claims",
        claimsFile,
        "--index",
        index.dir,
        "--out",
        predictOut,
      ];
      const { cpu } = await run(args).done;
      const seconds = (Date.now() - t0) / 1000;
      predictRuns.push({ seconds, cpu });
      log(
        `predict: ${seconds.toFixed(1)} s, ${(CLAIMS / seconds).toFixed(2)} claims/s, ${cpu.toFixed(0)} CPU-s`,
      );
      rows.push([
        `\`predict\` (1 process, default lanes), ${when}`,
        seconds.toFixed(1),
        (CLAIMS / seconds).toFixed(2),
        "",
        (cpu / CLAIMS).toFixed(3),
        "",
        "",
        "",
      ]);
    };

    // Each queue run is compared with a predict run: the one just before it, or one run at the same time (the load
    // drifts over minutes; two runs side by side share the same load).
    let cost1: RedisCounters | undefined;
    const rates1: number[] = [];
    let workSeconds1 = 0;
    const queue = async (
      workers: number,
      name: string,
      label: string,
      against: () => { seconds: number; cpu: number },
    ) => {
      log(`queue, ${workers} worker(s)`);
      const t0 = Date.now();
      const submitArgs = ["queue", "submit", "--redis", server.url, "--task", "1", "--claims", claimsFile];
      await run([...submitArgs, "--index", index.dir, "--run", name, "--chunk-size", String(CHUNK)]).done;
      const submitted = Date.now();
      const before = await counters(redis);
      const procs = [];
      for (let w = 0; w < workers; w++) {
        // Each worker its own cold cache, as on its own machine.
        await coldCache(tmp, `${name}-w${w}`);
        procs.push(run(["queue", "work", "--redis", server.url, "--index", index.dir, "--exit-when-idle"]));
      }
      const cpu = (await Promise.all(procs.map((p) => p.done))).reduce((a, p) => a + p.cpu, 0);
      const worked = Date.now();
      const cost = minus(await counters(redis), before);
      const out = join(tmp, `${name}.csv`);
      await run(["queue", "collect", "--redis", server.url, "--run", name, "--out", out]).done;
      const collected = Date.now();
      if (!readFileSync(out).equals(readFileSync(predictOut)))
        throw new Error(`queue run ${name} did not write predict's file`);
      const s = await runStatus(redis, name);
      const workSeconds = (worked - submitted) / 1000;
      const rate = CLAIMS / workSeconds;
      const previous = against();
      // The projection uses the 1-worker run that had the machine to itself.
      if (workers === 1 && label.startsWith("alone")) {
        cost1 = cost;
        workSeconds1 = workSeconds;
        rates1.push(rate);
      }
      log(
        `${workers} worker(s): ${workSeconds.toFixed(1)} s, ${rate.toFixed(2)} claims/s, ${cpu.toFixed(0)} CPU-s`,
      );
      rows.push([
        `queue, ${workers} \`work\` process${workers > 1 ? "es" : ""}, ${label}`,
        workSeconds.toFixed(1),
        rate.toFixed(2),
        (rate / (CLAIMS / previous.seconds)).toFixed(2),
        (cpu / CLAIMS).toFixed(3),
        // predict CPU over the queue's: above 1, the queue spends less for the same claims.
        (previous.cpu / cpu).toFixed(2),
        (CLAIMS / ((collected - t0) / 1000)).toFixed(2),
        s.claimsPerSecond?.toFixed(2) ?? "",
      ]);
    };
    const last = () => predictRuns[predictRuns.length - 1];
    await predict("alone");
    await queue(1, "bench-1", "alone, after it", last);
    for (const i of [1, 2]) {
      // Side by side: predict and one worker start together and share the machine.
      let together: { seconds: number; cpu: number } | undefined;
      const p = predict(`together ${i}`).then(() => {
        together = last();
      });
      const q = queue(1, `bench-t${i}`, `together ${i}`, () => together ?? last());
      await Promise.all([p, q]);
      // The queue row was written before predict ended: redo its ratios against the predict run beside it.
      const row = rows.find(
        (r) => String(r[0]).endsWith(`together ${i}`) && String(r[0]).startsWith("queue"),
      );
      const t = together as { seconds: number; cpu: number };
      if (row) {
        row[3] = (Number(row[2]) / (CLAIMS / t.seconds)).toFixed(2);
        row[5] = (t.cpu / (Number(row[4]) * CLAIMS)).toFixed(2);
      }
    }
    // Against the predict run that had the machine to itself (the last ones had half of it).
    const alone = predictRuns[0];
    await queue(2, "bench-2", "alone (ratio to predict alone)", () => alone);
    const workerRate1 = rates1.reduce((a, b) => a + b, 0) / rates1.length;
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const oneWorker = rows.filter((r) => /^queue, 1 .*together/.test(String(r[0])));
    const rateRatio1 = mean(oneWorker.map((r) => Number(r[3])));
    const cpuRatio1 = mean(oneWorker.map((r) => Number(r[5])));
    const loadEnd = loadAverage();

    const c1 = cost1 as RedisCounters;
    const chunks = CLAIMS / CHUNK;
    const perClaim = (x: number) => x / CLAIMS;
    // Redis CPU of a worker = per chunk (fetch, lock, complete: the no-op cost) + per second (lock renewals,
    // stalled checks, blocking waits, status polls): both measured, so any machine speed can be projected.
    const perChunkCpu = serial.cost.cpu / NOOP_CHUNKS;
    const perSecondCpu = Math.max(0, (c1.cpu - perChunkCpu * chunks) / workSeconds1 - idleCpuPerSecond);
    const perChunkCommands = serial.cost.commands / NOOP_CHUNKS;
    const perSecondCommands = Math.max(0, (c1.commands - perChunkCommands * chunks) / workSeconds1);
    const redisLoad = (rate: number) => perSecondCpu + (perChunkCpu * rate) / CHUNK;
    // N machines load Redis by N × redisLoad; its own idle work comes once.
    const redisCpu = (n: number, rate: number) => idleCpuPerSecond + n * redisLoad(rate);
    const machinesAt = (utilisation: number, rate: number) =>
      Math.floor((utilisation - idleCpuPerSecond) / redisLoad(rate));
    const projection = [1, 10, 100, 1000].flatMap((n) =>
      [workerRate1, PREDICT_BENCH_RATE].map((rate) => [
        n,
        rate.toFixed(1),
        (n * rate).toFixed(0),
        (n * (perSecondCommands + (perChunkCommands * rate) / CHUNK)).toFixed(0),
        `${(100 * redisCpu(n, rate)).toFixed(1)} %`,
        `${((n * rate * perClaim(c1.bytes)) / 2 ** 20).toFixed(2)}`,
      ]),
    );

    return {
      id: "queue",
      title: "Queue (BullMQ on Redis): throughput, overhead per chunk, projection to N machines",
      command: "npm run bench -- queue",
      markdown: `${CLAIMS} claims (half Climate-FEVER, half SciFact claim texts), task 1 (top ${K} abstracts, built-in
verifier); index: ${index.what}; Redis 7 (Debian redis-server, AOF on, fsync once a second) on loopback; chunks
of ${CHUNK} claims. Every process starts from a cold sentence-vector cache and is timed whole (Node start, models
and index loading included). Each collected file was checked byte-identical to predict's.

${table(["run", "seconds", "claims/s", "claims/s ratio to predict", "CPU-s/claim (all threads)", "CPU ratio (predict / queue)", "claims/s incl. submit + collect", "claims/s from chunk times"], rows)}

One worker against predict run beside it: mean claims/s ratio ${rateRatio1.toFixed(2)} over the two pairs, CPU ratio
${cpuRatio1.toFixed(2)} (so at the same share of the machine one worker does ${(100 * cpuRatio1).toFixed(0)} % of
predict's claims/s; the target is 90 %).

Queue "seconds": from the end of \`submit\` until the last \`work --exit-when-idle\` exits; the last column is claims
over first chunk started to last chunk finished (model loading left out). Two workers share this machine's 2 cores
(each with its own 2 encoder threads and models), so that row shows the cost of contention, not what a second
machine adds: on N machines each worker runs at the 1-worker rate. CPU-s/claim is the load-independent comparison.

**Queue overhead.** ${NOOP_CHUNKS} no-op chunks with task 1 sized data (${CHUNK} claims in, ${CHUNK} × ${K} results
out): ${serial.perChunkMs.toFixed(2)} ms per chunk one at a time (take, lock, complete with the result, take the
next), that is ${(serial.perChunkMs / CHUNK).toFixed(3)} ms per claim against ${(1000 / workerRate1).toFixed(0)} ms of
real work per claim here; ${parallel.perChunkMs.toFixed(2)} ms per chunk with 16 at a time. Per chunk, Redis runs
${perChunkCommands.toFixed(1)} commands in ${(1000 * perChunkCpu).toFixed(3)} ms of CPU. A finished chunk keeps
${(serial.bytesPerChunk / 1024).toFixed(1)} KiB of Redis memory (job, claims, results) until its run is removed:
${((serial.bytesPerChunk * (1e6 / CHUNK)) / 2 ** 30).toFixed(2)} GiB for a million claims.

**Redis per claim, real 1-worker run:** ${perClaim(c1.commands).toFixed(2)} commands,
${(1000 * perClaim(c1.cpu)).toFixed(3)} ms of Redis CPU, ${(perClaim(c1.bytes) / 1024).toFixed(2)} KiB over the network.
Split into the per-chunk cost above and a per-worker background (lock renewals, stalled checks, blocking waits, the
worker's status poll every second): ${perSecondCommands.toFixed(1)} commands and
${(1000 * perSecondCpu).toFixed(2)} ms of Redis CPU per worker-second, after leaving out what an idle Redis spends
on its own (${(1000 * idleCpuPerSecond).toFixed(2)} ms of CPU per second, measured over ${IDLE_MS / 1000} s before
the runs).

**Projection to N machines**, one worker each, at the 1-worker rate measured here and at predict's
${PREDICT_BENCH_RATE} claims/s on an unloaded machine (BENCHMARKS.md, "predict"); Redis executes commands on one
thread, so its CPU column is the share of one core:

${table(["machines", "claims/s each", "claims/s", "Redis commands/s", "Redis CPU", "network MiB/s"], projection)}

Redis becomes the limit (one core busy) at about ${machinesAt(1, PREDICT_BENCH_RATE)} machines at
${PREDICT_BENCH_RATE} claims/s each (${machinesAt(1, workerRate1)} at this run's rate); keep it under ~50 %
(${machinesAt(0.5, PREDICT_BENCH_RATE)} machines) for latency headroom. Past that: larger chunks (\`--chunk-size 64\`
divides the per-chunk part by 4) or one Redis per group of machines, each with its own runs. A million claims at
${PREDICT_BENCH_RATE} claims/s per machine: ${(1e6 / PREDICT_BENCH_RATE / 3600).toFixed(1)} h on one machine,
${((1e6 / PREDICT_BENCH_RATE / 3600) * 6).toFixed(0)} min on 10.

Load average (1/5/15 min) at the start: ${loadStart}; at the end: ${loadEnd}. Other engineers' jobs share the 2 cores
(a 1-minute figure above 2 means less than the whole machine), so claims/s are lower bounds and drift between runs
(a run alone is compared with predict alone; a run "together" with the predict run started beside it, which shares
the same load: those ratios are the fair ones).
`,
    };
  } finally {
    redis.disconnect();
    await server.cleanup();
    if (home === undefined) delete process.env.CLIMATECHECK_HOME;
    else process.env.CLIMATECHECK_HOME = home;
    await rm(tmp, { recursive: true, force: true });
  }
};
