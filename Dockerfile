# The service image: the API (npm start) and the standalone Kafka ingest (npm run ingest)
# run from the same image with different commands (see docker-compose.yml).
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# tsx (a devDependency) runs the TypeScript entry points, so dev dependencies are kept.
# npm install rather than npm ci: the lock file lacks some platform-specific optional
# entries of chdb, which makes npm ci refuse it.
RUN npm install --include=dev --no-audit --no-fund
COPY core ./core
COPY warehouse ./warehouse
COPY ingest ./ingest
COPY api ./api
COPY tsconfig.json ./
ENV HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
# Embedded mode (no CLICKHOUSE_URL) keeps its data here; mount a volume to keep it.
RUN mkdir -p /data && chown node:node /data
EXPOSE 8080 9464
USER node
CMD ["npm", "start"]
