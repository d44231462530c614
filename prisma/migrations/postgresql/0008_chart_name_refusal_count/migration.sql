-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "chartName" TEXT;

-- AlterTable
ALTER TABLE "Operation" ADD COLUMN     "count" INTEGER NOT NULL DEFAULT 1;

