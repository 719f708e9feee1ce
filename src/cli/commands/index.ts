/** Every subcommand registers itself on the program here; one line per command module. */
import type { Command } from "commander";
import { register as evaluate } from "./evaluate.ts";

export function registerCommands(program: Command): void {
  evaluate(program);
}
