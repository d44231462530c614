-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "Agent" (
    "id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "activeKey" TEXT,
    "state" TEXT NOT NULL,
    "spec" JSONB NOT NULL,
    "values" JSONB NOT NULL,
    "chartRef" TEXT NOT NULL,
    "chartVersion" TEXT,
    "revision" INTEGER NOT NULL,
    "helmRevision" INTEGER,
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "deletedAt" TIMESTAMP(3),
    "createdBy" TEXT NOT NULL,
    "updatedBy" TEXT NOT NULL,

    CONSTRAINT "Agent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AgentRevision" (
    "id" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "revision" INTEGER NOT NULL,
    "helmRevision" INTEGER,
    "kind" TEXT NOT NULL,
    "spec" JSONB NOT NULL,
    "values" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdBy" TEXT NOT NULL,
    "operationId" TEXT,
    "rolledBackTo" INTEGER,

    CONSTRAINT "AgentRevision_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Operation" (
    "id" TEXT NOT NULL,
    "agentId" TEXT,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "request" JSONB NOT NULL,
    "errorCode" TEXT,
    "errorMessage" TEXT,
    "helmRevision" INTEGER,
    "actor" TEXT NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "Operation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Agent_activeKey_key" ON "Agent"("activeKey");

-- CreateIndex
CREATE INDEX "Agent_namespace_name_idx" ON "Agent"("namespace", "name");

-- CreateIndex
CREATE UNIQUE INDEX "AgentRevision_agentId_revision_key" ON "AgentRevision"("agentId", "revision");

-- CreateIndex
CREATE INDEX "Operation_namespace_name_idx" ON "Operation"("namespace", "name");

-- CreateIndex
CREATE INDEX "Operation_state_idx" ON "Operation"("state");

-- AddForeignKey
ALTER TABLE "AgentRevision" ADD CONSTRAINT "AgentRevision_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Operation" ADD CONSTRAINT "Operation_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE SET NULL ON UPDATE CASCADE;

