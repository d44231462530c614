-- AlterTable
ALTER TABLE "IdempotencyRecord" ADD COLUMN "operationId" TEXT;

-- CreateIndex
CREATE INDEX "IdempotencyRecord_operationId_idx" ON "IdempotencyRecord"("operationId");

