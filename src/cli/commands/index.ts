/** Every subcommand registers itself on the program here; one line per command module. */
import type { Command } from "commander";

export function registerCommands(_program: Command): void {
  // Each command module exports `register(program)`; add it here.
}
