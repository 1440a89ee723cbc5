import type { Command } from "commander";
import { loadConfig } from "../config.ts";

export function register(program: Command): void {
  program
    .command("migrate")
    .description("apply pending warehouse migrations; safe to run again")
    .action(async () => {
      const config = loadConfig(process.env);
      const [{ openWarehouse }, { migrateToLatest }] = await Promise.all([import("../warehouse/connect.ts"), import("../warehouse/migrate.ts")]);
      const warehouse = await openWarehouse(config.warehouse);
      try {
        const { applied } = await migrateToLatest(warehouse);
        const where = warehouse.kind === "postgres" ? `schema ${warehouse.schema}` : `embedded warehouse, schema ${warehouse.schema}`;
        if (applied.length === 0) console.log(`warehouse up to date (${where})`);
        for (const name of applied) console.log(`applied ${name} (${where})`);
      } finally {
        await warehouse.destroy();
      }
    });
}
