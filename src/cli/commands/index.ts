/** Every subcommand registers itself on the program here; one line per command module. */
import type { Command } from "commander";
import { register as check } from "./check.ts";
import { register as classify } from "./classify.ts";
import { register as data } from "./data.ts";
import { register as evaluate } from "./evaluate.ts";
import { register as ingest } from "./ingest.ts";
import { register as models } from "./models.ts";
import { register as predict } from "./predict.ts";
import { register as queue } from "./queue.ts";
import { register as retrieve } from "./retrieve.ts";
import { register as serve } from "./serve.ts";
import { register as verify } from "./verify.ts";

export function registerCommands(program: Command): void {
  check(program);
  classify(program);
  data(program);
  evaluate(program);
  ingest(program);
  models(program);
  predict(program);
  queue(program);
  retrieve(program);
  serve(program);
  verify(program);
}
