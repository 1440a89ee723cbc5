import { readFileSync } from "node:fs";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useBackends, useMigratedWarehouse } from "./backends.ts";

/** Every example SQL statement in README.md and docs/warehouse.md runs against a migrated warehouse. */

const [postgres] = useBackends("example_sql");

function blocks(path: string): string[] {
  const text = readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
  return [...text.matchAll(/```sql\n([\s\S]*?)```/g)].flatMap((m) =>
    m[1]!
      .split(/;\s*\n/)
      .map((s) => s.replace(/^--.*$/gm, "").trim())
      .filter((s) => s.length > 0),
  );
}

describe("README and docs example SQL", () => {
  const warehouse = useMigratedWarehouse(postgres!);
  const statements = [...blocks("README.md").map((s) => ["README.md", s]), ...blocks("docs/warehouse.md").map((s) => ["docs/warehouse.md", s])];
  it.each(statements)("%s: %s", async (_file, statement) => {
    const text = statement.replace(/;$/, "").replace("'cmp_…'", "'cmp_x'");
    await expect(sql.raw(text).execute(warehouse().db)).resolves.toBeDefined();
  });
  it("found the examples", () => expect(statements.length).toBeGreaterThanOrEqual(10));
});
