export interface Services {
  databaseUrl: string;
  redisUrl: string;
}

interface Started {
  services: Services;
  stop: () => Promise<void>;
}

const MISSING_SERVICES =
  "tests need PostgreSQL and Redis: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres) and REDIS_URL (e.g. redis://127.0.0.1:6379), or make Docker available for testcontainers";

export class MissingServicesError extends Error {
  constructor() {
    super(MISSING_SERVICES);
    this.name = "MissingServicesError";
  }
}

async function dockerAvailable(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import("testcontainers");
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/**
 * Uses DATABASE_URL and REDIS_URL when set; otherwise starts what is missing
 * with testcontainers; when Docker is not there either, stops the run with one
 * line that says what to set.
 */
export async function startServices(env: NodeJS.ProcessEnv): Promise<Started> {
  let databaseUrl = env.DATABASE_URL;
  let redisUrl = env.REDIS_URL;
  const stops: (() => Promise<unknown>)[] = [];
  if ((!databaseUrl || !redisUrl) && !(await dockerAvailable())) throw new MissingServicesError();
  if (!databaseUrl) {
    const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
    const container = await new PostgreSqlContainer("postgres:16-alpine").withUsername("postgres").withPassword("postgres").start();
    databaseUrl = container.getConnectionUri();
    stops.push(() => container.stop());
  }
  if (!redisUrl) {
    const { RedisContainer } = await import("@testcontainers/redis");
    const container = await new RedisContainer("redis:7-alpine").start();
    redisUrl = container.getConnectionUrl();
    stops.push(() => container.stop());
  }
  return {
    services: { databaseUrl, redisUrl },
    stop: async () => {
      await Promise.all(stops.map((stop) => stop()));
    },
  };
}
