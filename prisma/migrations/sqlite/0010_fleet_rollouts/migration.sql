-- CreateTable
CREATE TABLE "Rollout" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "state" TEXT NOT NULL,
    "chartRef" TEXT NOT NULL,
    "chartVersion" TEXT,
    "request" JSONB NOT NULL,
    "wave" INTEGER NOT NULL DEFAULT 0,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "message" TEXT,
    "createdBy" TEXT NOT NULL,
    "caller" JSONB NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "finishedAt" DATETIME
);

-- CreateTable
CREATE TABLE "RolloutAgent" (
    "rolloutId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "wave" INTEGER NOT NULL,
    "agentId" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "plannedVersion" INTEGER NOT NULL,
    "fromChart" TEXT,
    "fromRevision" INTEGER NOT NULL,
    "state" TEXT NOT NULL,
    "reason" TEXT,
    "operationId" TEXT,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("rolloutId", "position"),
    CONSTRAINT "RolloutAgent_rolloutId_fkey" FOREIGN KEY ("rolloutId") REFERENCES "Rollout" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "Rollout_state_createdAt_idx" ON "Rollout"("state", "createdAt");

-- CreateIndex
CREATE INDEX "RolloutAgent_rolloutId_wave_idx" ON "RolloutAgent"("rolloutId", "wave");

