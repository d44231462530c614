-- CreateTable
CREATE TABLE "McpAnswer" (
    "sessionId" TEXT NOT NULL,
    "requestId" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("sessionId", "requestId")
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_McpSession" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "subject" TEXT NOT NULL,
    "authMethod" TEXT NOT NULL,
    "query" TEXT NOT NULL,
    "clientName" TEXT,
    "clientVersion" TEXT,
    "logLevel" TEXT,
    "elicits" BOOLEAN NOT NULL DEFAULT false,
    "replica" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" DATETIME NOT NULL
);
INSERT INTO "new_McpSession" ("authMethod", "clientName", "clientVersion", "createdAt", "id", "lastSeenAt", "logLevel", "query", "replica", "subject") SELECT "authMethod", "clientName", "clientVersion", "createdAt", "id", "lastSeenAt", "logLevel", "query", "replica", "subject" FROM "McpSession";
DROP TABLE "McpSession";
ALTER TABLE "new_McpSession" RENAME TO "McpSession";
CREATE INDEX "McpSession_subject_authMethod_lastSeenAt_idx" ON "McpSession"("subject", "authMethod", "lastSeenAt");
CREATE INDEX "McpSession_lastSeenAt_idx" ON "McpSession"("lastSeenAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "McpAnswer_createdAt_idx" ON "McpAnswer"("createdAt");

