import assert from "node:assert/strict";
import { test } from "node:test";
import { ServiceError } from "../src/data/errors.ts";
import { connectRedis } from "../src/queue/redis.ts";
import { HAS_REDIS, startRedis } from "./redis-fixture.ts";

test("a worker connection started while Redis restarts waits for it; a short-lived one fails at once", {
  skip: !HAS_REDIS && "redis-server is not installed",
}, async () => {
  const redis = await startRedis();
  try {
    await redis.stop();
    // A short-lived command (status, submit) gives up after a few tries with the clear error.
    await assert.rejects(connectRedis(redis.url), (e: unknown) => {
      assert.ok(e instanceof ServiceError);
      assert.match(e.message, /cannot use Redis at redis:\/\/127\.0\.0\.1:\d+\/?: .*ECONNREFUSED/);
      return true;
    });
    // A worker (or a waiting collect) whose first connect fails rides it out: Redis is back 1.5 s later.
    const logs: string[] = [];
    const connecting = connectRedis(redis.url, { worker: true, log: (m) => logs.push(m) });
    await new Promise((r) => setTimeout(r, 1500));
    await redis.start();
    const c = await connecting;
    assert.equal(await c.ping(), "PONG");
    c.disconnect();
    assert.ok(
      logs.some((m) => /not answering; waiting up to 60 s/.test(m)),
      logs.join("\n"),
    );
    // ...but not for ever: with Redis away past its wait, the same clear error.
    await redis.stop();
    await assert.rejects(connectRedis(redis.url, { worker: true, startWaitMs: 300 }), /cannot use Redis at/);
  } finally {
    await redis.cleanup();
  }
});
