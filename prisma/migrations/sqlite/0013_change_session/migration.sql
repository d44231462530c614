-- AlterTable
ALTER TABLE "Change" ADD COLUMN "proposerSession" TEXT;

