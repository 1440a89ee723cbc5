# coldsync: one image for every command (worker, migrate, emulator, sync, status, verify).
# The TypeScript sources run through tsx (a runtime dependency), so there is no build stage.
FROM node:20-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, so that a source change does not reinstall them.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

COPY tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY migrations ./migrations

# The embedded warehouse (`coldsync demo`) writes under .coldsync/; everything else is read-only.
RUN mkdir -p /app/.coldsync && chown node:node /app/.coldsync
USER node

# /healthz, /metrics and /admin/queues of `coldsync worker` (COLDSYNC_HTTP_PORT).
EXPOSE 9464

# `docker stop` sends SIGTERM: the worker drains (runs stop after their current page) and exits 0 within 30 s.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/coldsync.js"]
CMD ["worker"]
