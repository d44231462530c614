-- CreateTable
CREATE TABLE "Change" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "state" TEXT NOT NULL,
    "operation" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "request" JSONB NOT NULL,
    "caller" JSONB NOT NULL,
    "proposer" TEXT NOT NULL,
    "proposalKey" TEXT,
    "plannedVersion" INTEGER,
    "preview" JSONB NOT NULL,
    "diff" TEXT NOT NULL,
    "rule" TEXT NOT NULL,
    "approvers" TEXT NOT NULL,
    "required" INTEGER NOT NULL,
    "approvals" JSONB NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 0,
    "decidedBy" TEXT,
    "comment" TEXT,
    "message" TEXT,
    "operationId" TEXT,
    "result" JSONB,
    "expiresAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "Change_state_createdAt_idx" ON "Change"("state", "createdAt");

-- CreateIndex
CREATE INDEX "Change_namespace_createdAt_idx" ON "Change"("namespace", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Change_proposer_proposalKey_key" ON "Change"("proposer", "proposalKey");

