-- CreateTable
CREATE TABLE "Rollout" (
    "id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "chartRef" TEXT NOT NULL,
    "chartVersion" TEXT,
    "request" JSONB NOT NULL,
    "wave" INTEGER NOT NULL DEFAULT 0,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "message" TEXT,
    "createdBy" TEXT NOT NULL,
    "caller" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "Rollout_pkey" PRIMARY KEY ("id")
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
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "RolloutAgent_pkey" PRIMARY KEY ("rolloutId","position")
);

-- CreateIndex
CREATE INDEX "Rollout_state_createdAt_idx" ON "Rollout"("state", "createdAt");

-- CreateIndex
CREATE INDEX "RolloutAgent_rolloutId_wave_idx" ON "RolloutAgent"("rolloutId", "wave");

-- AddForeignKey
ALTER TABLE "RolloutAgent" ADD CONSTRAINT "RolloutAgent_rolloutId_fkey" FOREIGN KEY ("rolloutId") REFERENCES "Rollout"("id") ON DELETE CASCADE ON UPDATE CASCADE;

