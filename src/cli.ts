import { Command, CommanderError } from "commander";
import { ConfigError } from "./config.ts";
import { boundHeapGrowth } from "./heap.ts";

/**
 * The `coldsync` command line (contract C). Each command lives in its own
 * module under src/commands/ and registers itself on the program.
 */

boundHeapGrowth();

const program = new Command()
  .name("coldsync")
  .description("Keeps a PostgreSQL warehouse in step with a cold-email campaign service's API.")
  .showHelpAfterError()
  .exitOverride();

const COMMANDS: Record<string, () => Promise<{ register(program: Command): void }>> = {
  demo: () => import("./commands/demo.ts"),
  migrate: () => import("./commands/migrate.ts"),
  sync: () => import("./commands/sync.ts"),
  status: () => import("./commands/status.ts"),
  verify: () => import("./commands/verify.ts"),
  worker: () => import("./commands/worker.ts"),
  emulator: () => import("./commands/emulator.ts"),
};

// Loading every command's modules (the worker's queues and web server, the embedded database) takes longer than
// most commands run, so only the one named is loaded; the program's own help and an unknown name need them all.
const named = process.argv.slice(2).find((arg) => !arg.startsWith("-"));
const loaders = named !== undefined && Object.hasOwn(COMMANDS, named) ? [COMMANDS[named] as () => Promise<{ register(program: Command): void }>] : Object.values(COMMANDS);
for (const module of await Promise.all(loaders.map((load) => load()))) module.register(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  if (error instanceof ConfigError) {
    for (const problem of error.problems) console.error(`coldsync: ${problem}`);
    process.exit(2);
  }
  console.error(`coldsync: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
