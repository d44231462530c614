-- CreateTable
CREATE TABLE "McpSession" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "subject" TEXT NOT NULL,
    "authMethod" TEXT NOT NULL,
    "query" TEXT NOT NULL,
    "clientName" TEXT,
    "clientVersion" TEXT,
    "logLevel" TEXT,
    "replica" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "McpSession_subject_authMethod_lastSeenAt_idx" ON "McpSession"("subject", "authMethod", "lastSeenAt");

-- CreateIndex
CREATE INDEX "McpSession_lastSeenAt_idx" ON "McpSession"("lastSeenAt");

