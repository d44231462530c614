-- AlterTable
ALTER TABLE "McpSession" ADD COLUMN     "elicits" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "McpAnswer" (
    "sessionId" TEXT NOT NULL,
    "requestId" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "McpAnswer_pkey" PRIMARY KEY ("sessionId","requestId")
);

-- CreateIndex
CREATE INDEX "McpAnswer_createdAt_idx" ON "McpAnswer"("createdAt");

