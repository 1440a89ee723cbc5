import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    // A worker keeps the modules it imported from one test file to the next: the suite spent a fifth of its wall
    // importing the same sources again for every file. Files share no state but caches that hold for every
    // warehouse (compiled upserts, column types of the latest migrations); each has its own database or schema,
    // Redis prefix and servers, and a file that changes process-wide state (fake timers, env) puts it back.
    isolate: false,
  },
});
