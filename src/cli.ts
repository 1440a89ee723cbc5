import { Command, CommanderError } from "commander";
import { ConfigError } from "./config.ts";

/**
 * The `coldsync` command line (contract C). Each command lives in its own
 * module under src/commands/ and registers itself on the program.
 */

const program = new Command()
  .name("coldsync")
  .description("Keeps a PostgreSQL warehouse in step with a cold-email campaign service's API.")
  .showHelpAfterError()
  .exitOverride();

const registrations = [
  import("./commands/demo.ts"),
  import("./commands/migrate.ts"),
  import("./commands/sync.ts"),
  import("./commands/status.ts"),
  import("./commands/verify.ts"),
  import("./commands/worker.ts"),
  import("./commands/emulator.ts"),
];
for (const module of await Promise.all(registrations)) module.register(program);

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
