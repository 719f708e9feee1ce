/** Every subcommand registers itself on the program here; one line per command module. */
import type { Command } from "commander";
import { register as evaluate } from "./evaluate.ts";
import { register as ingest } from "./ingest.ts";
import { register as retrieve } from "./retrieve.ts";

export function registerCommands(program: Command): void {
  evaluate(program);
  ingest(program);
  retrieve(program);
}
