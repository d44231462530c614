-- CreateTable
CREATE TABLE "McpSession" (
    "id" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "authMethod" TEXT NOT NULL,
    "query" TEXT NOT NULL,
    "clientName" TEXT,
    "clientVersion" TEXT,
    "logLevel" TEXT,
    "replica" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "McpSession_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "McpSession_subject_authMethod_lastSeenAt_idx" ON "McpSession"("subject", "authMethod", "lastSeenAt");

-- CreateIndex
CREATE INDEX "McpSession_lastSeenAt_idx" ON "McpSession"("lastSeenAt");

