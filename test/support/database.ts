import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, inject } from "vitest";
import { createScratchDatabase, type ScratchDatabase } from "../../src/warehouse/scratch-database.ts";

/** A database of its own for one test file, so files can run in parallel; dropped afterwards. */
export function createTestDatabase(label = "t"): Promise<ScratchDatabase> {
  const name = `coldsync_${label.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}_${randomBytes(4).toString("hex")}`;
  return createScratchDatabase(inject("services").databaseUrl, name);
}

/** Registers beforeAll/afterAll hooks and returns a getter for the file's database URL. */
export function useTestDatabase(label?: string): () => string {
  let current: ScratchDatabase | undefined;
  beforeAll(async () => {
    current = await createTestDatabase(label);
  });
  afterAll(async () => {
    await current?.drop();
  });
  return () => {
    if (!current) throw new Error("the test database exists only inside tests and hooks");
    return current.url;
  };
}
