-- AlterTable
ALTER TABLE "Agent" ADD COLUMN "chartName" TEXT;

-- AlterTable
-- Prisma's diff rebuilds the whole Operation table for a required column; SQLite adds a NOT NULL
-- column with a constant default in place, which leaves the same table without copying the journal.
ALTER TABLE "Operation" ADD COLUMN "count" INTEGER NOT NULL DEFAULT 1;
