-- AlterTable
ALTER TABLE "Operation" ADD COLUMN "baseHelmRevision" INTEGER;
ALTER TABLE "Operation" ADD COLUMN "intent" JSONB;
ALTER TABLE "Operation" ADD COLUMN "owner" TEXT;

-- CreateTable
CREATE TABLE "AgentLease" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "owner" TEXT NOT NULL,
    "operationId" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "acquiredAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "IdempotencyRecord" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "requestHash" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "status" INTEGER,
    "response" JSONB,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "IdempotencyRecord_expiresAt_idx" ON "IdempotencyRecord"("expiresAt");

