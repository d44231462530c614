-- CreateTable
CREATE TABLE "Agent" (
    "id" TEXT NOT NULL PRIMARY KEY,
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
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "deletedAt" DATETIME,
    "createdBy" TEXT NOT NULL,
    "updatedBy" TEXT NOT NULL
);

-- CreateTable
CREATE TABLE "AgentRevision" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "agentId" TEXT NOT NULL,
    "revision" INTEGER NOT NULL,
    "helmRevision" INTEGER,
    "kind" TEXT NOT NULL,
    "spec" JSONB NOT NULL,
    "values" JSONB NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdBy" TEXT NOT NULL,
    "operationId" TEXT,
    "rolledBackTo" INTEGER,
    CONSTRAINT "AgentRevision_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Operation" (
    "id" TEXT NOT NULL PRIMARY KEY,
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
    "startedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" DATETIME,
    CONSTRAINT "Operation_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE SET NULL ON UPDATE CASCADE
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

